"""The shipped FreeSWITCH config (fs-conf/, dialplan/) replayed through the validator."""
from __future__ import annotations

import shutil
import uuid
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from app.media.moh import BUILT_IN_NAMES
from app.routing.acl import build_acl
from app.routing.fsconfig import outbound_gateways, write_generated
from app.routing.fsvalidate import validate
from app.routing.lcr import gateway_name
from tests.routing.world import build_rows, load_world

ROOT = Path(__file__).resolve().parents[2]
CODE = (ROOT / "esl", ROOT / "app")


@pytest.fixture()
def conf_copy(tmp_path: Path) -> tuple[Path, Path]:
    conf = tmp_path / "fs-conf"
    dialplan = tmp_path / "dialplan"
    shutil.copytree(ROOT / "fs-conf", conf, ignore=shutil.ignore_patterns("*.xml.tmp"))
    for generated in (conf / "generated").rglob("*.xml"):
        generated.unlink()  # a developer's local run must not leak into the check
    shutil.copytree(ROOT / "dialplan", dialplan)
    return conf, dialplan


def _settings(doc, conf_name: str) -> dict[str, str]:
    conf = doc.find(f"./section[@name='configuration']/configuration[@name='{conf_name}']")
    return {p.get("name"): p.get("value") for p in conf.iter("param")}


def test_given_shipped_config_when_validated_then_no_problems(conf_copy):
    report = validate(*conf_copy, CODE)
    assert report.problems == []


def test_given_shipped_config_then_trunk_profile_matches_the_spec(conf_copy):
    doc = validate(*conf_copy, CODE).document
    profile = doc.find(".//configuration[@name='sofia.conf']/profiles/profile[@name='external']")
    params = {p.get("name"): p.get("value") for p in profile.find("settings").iter("param")}
    assert params["apply-inbound-acl"] == "gateways"
    assert params["auth-calls"] == "false"
    assert params["sip-port"] == "5060"
    assert set(params["bind-params"].split("=")[1].split(",")) == {"udp", "tcp"}
    assert params["tls"] == "false" and params["tls-sip-port"] == "5061"  # on with FS_TLS=true
    assert params["tls-version"] == "tlsv1.2,tlsv1.3"  # nothing older
    assert all(c.startswith("ECDHE-") and ("GCM" in c or "CHACHA20" in c)
               for c in params["tls-ciphers"].split(":"))  # forward secrecy and AEAD only
    assert params["tls-verify-policy"] == "out"  # carriers' certificates are checked
    assert params["dtmf-type"] == "rfc2833" and params["rfc2833-pt"] == "101"
    assert params["liberal-dtmf"] == "true"
    assert params["context"] == "public"
    assert params["inbound-codec-prefs"].split(",") == ["OPUS", "G722", "PCMU", "PCMA", "G729"]
    assert set(params["outbound-codec-prefs"].split(",")) == {"OPUS", "G722", "PCMU", "PCMA", "G729"}
    assert params["disable-transcoding"] == "false" and params["inbound-bypass-media"] == "false"
    assert "rtp-secure-media" not in params  # not a sofia setting: SRTP is set per carrier leg


def test_given_shipped_config_then_every_leg_sends_its_own_rtp_clock_and_agents_send_no_comfort_noise(conf_copy):
    """A browser agent's RTP timestamps copied into a trunk caller's stream made baresip drop
    the agent's audio; a browser's comfort-noise silences reached the caller as no packets
    (issue 27 item 2, docs/agents.md; end to end in tests/realswitch/test_browser_agent_trunk_audio.py)."""
    doc = validate(*conf_copy, CODE).document
    profiles = {p.get("name"): {x.get("name"): x.get("value") for x in p.find("settings").iter("param")}
                for p in doc.findall(".//configuration[@name='sofia.conf']/profiles/profile")}
    assert profiles["external"]["rtp-rewrite-timestamps"] == "true"
    assert profiles["internal"]["rtp-rewrite-timestamps"] == "true"
    assert profiles["internal"]["suppress-cng"] == "true"


def test_given_shipped_config_then_bridged_legs_offer_every_trunk_codec_so_calls_transcode(conf_copy):
    """Without it a bridged leg offers only the caller's codec (PCMA caller → PCMU carrier:
    INCOMPATIBLE_DESTINATION on the real switch); proven end to end in tests/realswitch."""
    report = validate(*conf_copy, CODE)
    assert report.variables["media_mix_inbound_outbound_codecs"] == "true"


def test_given_shipped_config_then_no_leg_copies_the_x_headers_of_the_leg_it_was_dialled_from(conf_copy):
    """A caller's X- headers never reach a carrier (proven on the real switch in
    tests/realswitch/test_carrier_on_the_internet.py)."""
    assert validate(*conf_copy, CODE).variables["sip_copy_custom_headers"] == "false"


def test_given_shipped_config_then_switch_and_esl_settings_are_set(conf_copy):
    report = validate(*conf_copy, CODE)
    switch = _settings(report.document, "switch.conf")
    assert int(switch["rtp-start-port"]) < int(switch["rtp-end-port"])
    assert int(switch["max-sessions"]) > 0 and int(switch["sessions-per-second"]) > 0
    esl = _settings(report.document, "event_socket.conf")
    assert esl["listen-port"] == "8021"
    assert esl["password"] == "env:FS_ESL_PASSWORD"  # only ever from the environment
    assert "esl_password" in report.env_only


def test_given_shipped_dialplan_then_calls_go_to_the_controller_and_fail_safe_with_503(conf_copy):
    doc = validate(*conf_copy, CODE).document
    context = doc.find("./section[@name='dialplan']/context[@name='public']")
    actions = [(a.get("application"), a.get("data")) for a in context.find("extension").iter("action")]
    apps = [a for a, _ in actions]
    assert ("socket", "127.0.0.1:8084 async full") in actions
    assert apps.index("socket") < apps.index("respond") < apps.index("hangup")
    assert ("respond", "503 Service Unavailable") in actions


def test_given_generated_gateways_and_acl_when_validated_then_they_land_in_the_profile_and_list(conf_copy):
    conf, dialplan = conf_copy
    rows = build_rows(load_world())
    entries, _ = build_acl(rows.gateways, rows.carriers)
    gateways = outbound_gateways(rows.gateways, rows.carriers)
    write_generated(conf / "generated", entries, gateways)
    report = validate(conf, dialplan, CODE)
    assert report.problems == []
    acl = report.document.find(".//configuration[@name='acl.conf']//list[@name='gateways']")
    assert sorted(n.get("cidr") for n in acl.findall("node")) == sorted({str(e.network) for e in entries})
    profile = report.document.find(".//profile[@name='external']/gateways")
    names = sorted(g.get("name") for g in profile.findall("gateway"))
    assert names == sorted(gateway_name(g.id) for g in gateways)
    one = profile.find("gateway")
    params = {p.get("name"): p.get("value") for p in one.iter("param")}
    assert params["register"] == "false" and params["ping"] == "30" and params["caller-id-in-from"] == "true"


def test_given_a_module_removed_when_validated_then_the_missing_module_is_reported(conf_copy):
    conf, dialplan = conf_copy
    modules = conf / "autoload_configs" / "modules.conf.xml"
    modules.write_text(modules.read_text().replace('<load module="mod_conference"/>', ""))
    problems = validate(conf, dialplan, CODE).problems
    assert any("mod_conference is needed" in p for p in problems)


def test_given_tone_stream_removed_when_validated_then_silence_stream_users_are_reported(conf_copy):
    """The hold of record/listen and gather's silent prompt are silence_stream:// (issue 9)."""
    conf, dialplan = conf_copy
    modules = conf / "autoload_configs" / "modules.conf.xml"
    modules.write_text(modules.read_text().replace('<load module="mod_tone_stream"/>', ""))
    problems = validate(conf, dialplan, CODE).problems
    (problem,) = [p for p in problems if p.startswith("mod_tone_stream is needed")]
    assert "hold.py" in problem and "gather.py" in problem


def test_given_an_unused_module_when_validated_then_it_is_reported(conf_copy):
    conf, dialplan = conf_copy
    modules = conf / "autoload_configs" / "modules.conf.xml"
    modules.write_text(modules.read_text().replace("</modules>", '<load module="mod_voicemail"/></modules>'))
    assert any("mod_voicemail is loaded but nothing uses it" in p for p in validate(conf, dialplan, CODE).problems)


def test_given_an_undefined_variable_when_validated_then_it_is_reported(conf_copy):
    conf, dialplan = conf_copy
    (dialplan / "extra.xml").write_text(
        '<include>\n<context name="x"><extension name="e"><condition>\n'
        '<action application="set" data="a=$${no_such_var}"/>\n'
        '</condition></extension></context>\n</include>\n')
    assert any("no_such_var" in p for p in validate(conf, dialplan, CODE).problems)


def test_given_broken_xml_when_validated_then_the_file_is_named(conf_copy):
    conf, dialplan = conf_copy
    (conf / "autoload_configs" / "broken.conf.xml").write_text("<configuration name='b'><settings></configuration>")
    problems = validate(conf, dialplan, CODE).problems
    assert any("broken.conf.xml" in p for p in problems)


def test_given_unknown_dialplan_application_when_validated_then_reported(conf_copy):
    conf, dialplan = conf_copy
    (dialplan / "extra.xml").write_text(
        '<include>\n<context name="x"><extension name="e"><condition>\n'
        '<action application="lua" data="x.lua"/>\n'
        '</condition></extension></context>\n</include>\n')
    assert any("'lua'" in p for p in validate(conf, dialplan, CODE).problems)


def test_given_sofia_acl_name_typo_when_validated_then_reported(conf_copy):
    conf, dialplan = conf_copy
    profile = conf / "sip_profiles" / "external.xml"
    profile.write_text(profile.read_text().replace('value="gateways"', 'value="gatewayz"'))
    assert any("gatewayz" in p for p in validate(conf, dialplan, CODE).problems)


def test_uuid_names_are_valid_gateway_names():
    # sofia gateway names appear in dial strings and api commands: no spaces, '/', '|' or ','
    name = gateway_name(uuid.uuid4())
    assert name.replace("_", "").isalnum()


def test_given_switch_limits_then_rtp_ports_cover_max_sessions(conf_copy):
    report = validate(*conf_copy, CODE)
    switch = _settings(report.document, "switch.conf")
    ports = int(switch["rtp-end-port"]) - int(switch["rtp-start-port"]) + 1
    # each call leg takes an RTP and an RTCP port
    assert ports // 2 >= int(switch["max-sessions"])


def test_the_music_streams_a_queue_may_name_are_the_shipped_local_streams():
    """app/media/moh.py accepts a queue moh naming these without an upload: each must exist in
    local_stream.conf (``default`` too: the fallback when the shipped file cannot be written)."""
    conf = ET.parse(ROOT / "fs-conf" / "autoload_configs" / "local_stream.conf.xml").getroot()
    assert {d.get("name") for d in conf.iter("directory")} == set(BUILT_IN_NAMES)
