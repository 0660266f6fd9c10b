"""One source for the event-socket secret (issue 9 item 12): a controller given only
``FS_ESL_PASSWORD`` — as docker-compose gives it to FreeSWITCH and the controller — logs in to
a ``freeswitch.nodes`` entry that names no password, and calls flow through it."""
from __future__ import annotations

from app.config import set_value
from tests.realswitch.product import ProductProcess

CONNECT_WAIT_SECONDS = 30.0


def test_controller_logs_in_with_fs_esl_password_when_the_node_names_no_password(product, tenant, sipp):
    switch = product.switch
    number = tenant.number_for([{"verb": "say", "text": "One secret."}, {"verb": "hangup"}])
    product.controller.stop()
    env = dict(product.env, FS_ESL_PASSWORD=switch.password)
    secretless = ProductProcess("controller-env-secret", ["controller"], env, product.logdir)
    try:
        set_value("freeswitch.nodes", [{"host": "127.0.0.1", "port": switch.ports.esl}], announce=False)
        secretless.start()
        assert product.wait_for_log(secretless, "inbound ESL connected to", CONNECT_WAIT_SECONDS), \
            secretless.log_tail()
        result = sipp.call(number)
        assert result.ok, result.errors or result.stdout[-1500:]
        assert tenant.wait_record(number)[0]["status"] == "completed"
    finally:
        secretless.stop()
        set_value("freeswitch.nodes", [{"host": "127.0.0.1", "port": switch.ports.esl,
                                        "password": switch.password}], announce=False)
        product.start_controller(wait=True)
