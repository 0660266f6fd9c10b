"""A second FreeSWITCH playing a carrier on the internet (tests/realswitch/carrier-conf/):
registrar with one directory user, SIP over TLS with its own certificate from the run's
development CA (the product's cafile.pem is that CA: a private CA), SRTP mandatory.

It runs the same binary as the product's switch (freeswitch.py ``RealSwitch``) on its own
ports and work folder; only the configuration differs."""
from __future__ import annotations

import shutil
from pathlib import Path

from tests.realswitch.freeswitch import WORK_FOLDERS, RealSwitch, SwitchPorts

CONF = Path(__file__).resolve().parent / "carrier-conf"
USER = "acct42"
DOMAIN = "carrier.test"


class CarrierSwitch(RealSwitch):
    """``password`` is the ESL password; ``sip_password`` the directory user's."""

    def __init__(self, tree: Path, workdir: Path, ports: SwitchPorts, password: str,
                 ca_dir: Path, sip_password: str) -> None:
        super().__init__(tree, workdir, ports, password, ca_dir=ca_dir)
        self.sip_password = sip_password

    def environment(self) -> dict[str, str]:
        return {
            "CARRIER_BIND_IP": self.bind_ip,
            "CARRIER_SIP_PORT": str(self.ports.sip),
            "CARRIER_TLS_PORT": str(self.ports.tls_sip),
            "CARRIER_TLS_DIR": str(self.tls_dir),
            "CARRIER_ESL_PORT": str(self.ports.esl),
            "CARRIER_ESL_PASSWORD": self.password,
            "CARRIER_RTP_START": str(self.ports.rtp_start),
            "CARRIER_RTP_END": str(self.ports.rtp_end),
            "CARRIER_USER": USER,
            "CARRIER_PASSWORD": self.sip_password,
        }

    def install_config(self) -> None:
        if self.conf.exists():
            shutil.rmtree(self.conf)
        shutil.copytree(CONF, self.conf)
        for folder in WORK_FOLDERS:
            (self.workdir / folder).mkdir(parents=True, exist_ok=True)
        self.make_certificate()
