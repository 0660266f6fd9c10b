"""A controller whose link to one data service (PostgreSQL or Redis) goes through a TCP relay the
test cuts: the product's controller is replaced by it for the test and restored afterwards."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from sqlalchemy import make_url

from tests.events.tcp_proxy import TcpProxy
from tests.realswitch.product import START_TIMEOUT_SECONDS, Product, ProductProcess, wait_for_port


@contextmanager
def relayed_controller(product: Product, upstream: tuple[str, int],
                       urls: dict[str, str]) -> Iterator[tuple[TcpProxy, ProductProcess]]:
    """``urls``: environment variable → service URL, each rewritten to reach ``upstream``
    through the relay."""
    proxy = TcpProxy(upstream).start()
    env = dict(product.env)
    for variable, url in urls.items():
        env[variable] = make_url(url).set(host="127.0.0.1", port=proxy.port).render_as_string(
            hide_password=False)
    product.controller.stop()
    relayed = ProductProcess(f"controller-relayed-{proxy.port}", ["controller"], env,
                             product.logdir).start()
    try:
        assert wait_for_port(product.switch.ports.controller), relayed.log_tail()
        assert product.wait_for_log(relayed, "inbound ESL connected to", START_TIMEOUT_SECONDS)
        yield proxy, relayed
    finally:
        proxy.heal()
        relayed.stop()
        proxy.stop()
        product.start_controller(wait=True)
