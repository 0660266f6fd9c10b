"""Test session setup: cooperative I/O exactly as in production, and private resources.

Every run gets its own PostgreSQL database, Redis key prefix and RabbitMQ vhost, named after
the run, and removes them afterwards; nothing here is a mock.
"""
import os
import uuid

from app.gevent_setup import patch

patch()

RUN_ID = f"t{os.getpid()}_{uuid.uuid4().hex[:6]}"
os.environ.setdefault("SBC_TEST_RUN_ID", RUN_ID)
os.environ["SBC_DATABASE_URL"] = f"postgresql://postgres@127.0.0.1:5432/sbc_{RUN_ID}"
os.environ["SBC_REDIS_KEY_PREFIX"] = f"sbc:{RUN_ID}:"
os.environ["SBC_AMQP_URL"] = f"amqp://guest:guest@127.0.0.1:5672/sbc_{RUN_ID}"
os.environ["SBC_JWT_SECRET"] = "test-secret-" + uuid.uuid4().hex
os.environ["SBC_ALLOW_LOOPBACK_WEBHOOKS"] = "1"
os.environ["SBC_ALLOW_LOOPBACK_SSO"] = "1"  # tests/sso's OpenID provider listens on 127.0.0.1

pytest_plugins = [
    "tests.plugins.database",
    "tests.plugins.services",
    "tests.plugins.webhook_server",
    "tests.plugins.api",
    "tests.plugins.esl_sim",
]
