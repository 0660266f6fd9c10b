"""Every number of SPEC.md's Limits table (and the defaults the verb tables fix), in one place."""
from __future__ import annotations

# Concurrency: maxConcurrentCalls per account and per service provider; 0 means unlimited.
UNLIMITED_CONCURRENT_CALLS = 0

# CSV export
CSV_EXPORT_MAX_ROWS = 10_000

# Webhook client (call_hook_url, actionHook, redirect)
WEBHOOK_TIMEOUT_SECONDS = 10.0
WEBHOOK_ATTEMPTS = 3
WEBHOOK_RETRY_DELAYS_SECONDS = (0.5, 1.0)  # before attempt 2, before attempt 3
WEBHOOK_MAX_RESPONSE_BYTES = 1024 * 1024  # a verb list never needs more; caps memory per call
WEBHOOK_USER_AGENT = "SaaS-SBC/1.0"
# ws(s):// call handlers: subprotocol audio.<vendor>.org, bounded reconnect backoff
WS_DEFAULT_VENDOR = "saas-sbc"
WS_RECONNECT_DELAYS_SECONDS = (0.5, 1.0, 2.0, 4.0)  # one delay per reconnect attempt, then give up
WS_ACK_TIMEOUT_SECONDS = 10.0  # same budget as one HTTP attempt

# Queue callbacks
CALLBACK_MAX_ATTEMPTS = 3

# Gateway health: SIP OPTIONS interval (FreeSWITCH gateway `ping`)
GATEWAY_PING_SECONDS = 30

# JWT lifetime ("about 8 hours")
TOKEN_LIFETIME_SECONDS = 8 * 3600

# gather
GATHER_DEFAULT_TIMEOUT_SECONDS = 5
GATHER_DEFAULT_FINISH_ON_KEY = "#"

# dial
DIAL_DEFAULT_RING_TIMEOUT_SECONDS = 60

# queue
QUEUE_DEFAULT_MAX_WAIT_SECONDS = 300
QUEUE_DEFAULT_ANNOUNCE_INTERVAL_SECONDS = 30

# listen
LISTEN_SAMPLE_RATES = (8000, 16000)
LISTEN_DEFAULT_SAMPLE_RATE = 16000

# API keys
API_KEY_PREFIX = "sk_"
API_KEY_RANDOM_BYTES = 32
API_KEY_DISPLAY_PREFIX_LENGTH = 10

# Concurrency limiter (Redis): a call's slot expires unless its controller refreshes it, so a
# crashed controller's calls free their slots after at most the TTL.
LIMITER_SLOT_TTL_SECONDS = 90
LIMITER_REFRESH_SECONDS = 30

# Event bus: publisher confirms wait at most this long; reconnect backoff grows to the cap.
EVENT_CONFIRM_TIMEOUT_SECONDS = 10
EVENT_RECONNECT_BACKOFF_SECONDS = (0.2, 30.0)  # first delay, cap (doubling in between)
EVENT_OUTBOX_BATCH = 200
EVENT_OUTBOX_RETENTION_SECONDS = 24 * 3600  # published rows older than this are pruned
SERVICE_HEARTBEAT_SECONDS = 30

# Interaction summary: a caller who abandons within this many seconds of queueing is a
# short abandon (not counted against service level).
SHORT_ABANDON_SECONDS = 5

# Verb language (webhook replies, app_json, flows). Not from SPEC's Limits table: product
# bounds so one customer reply cannot make the controller build unbounded ESL commands.
VERB_LIST_MAX_VERBS = 100
VERB_MAX_HOOK_ROUNDS = 50        # actionHook/redirect/timeoutHook replacements per call
VERB_URL_MAX_LENGTH = 2048
SAY_TEXT_MAX_CHARS = 4000
VERB_LOOP_MAX = 100              # say/play `loop`
GATHER_MAX_DIGITS = 64           # play_and_get_digits keeps digits in a 128-byte buffer
GATHER_MAX_TIMEOUT_SECONDS = 120
GATHER_PROMPT_MAX_TRIES = 10
DIAL_MAX_TARGETS = 10
DIAL_MAX_RING_TIMEOUT_SECONDS = 600
QUEUE_MAX_WAIT_SECONDS = 86_400
QUEUE_MIN_ANNOUNCE_INTERVAL_SECONDS = 5
CONFERENCE_MAX_PARTICIPANTS = 1000
PAUSE_DEFAULT_SECONDS = 1
PAUSE_MAX_SECONDS = 3600
TAG_MAX_KEYS = 50
VERB_JSON_OBJECT_MAX_CHARS = 4096  # serialized size of tag `data` / listen `metadata`
FLOW_MAX_NODES = 500
FLOW_MAX_STEPS = 1000             # nodes executed per call before the flow is stopped
# Widest inbound gateway network (prefix length): a /0../7 entry would admit a large part of the
# internet to the trunk port. The API refuses it on save; the ACL builder skips it.
GATEWAY_MIN_INBOUND_PREFIX = 8
