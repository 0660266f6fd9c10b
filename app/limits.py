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
# A caller waits in silence for the first reply of call_hook_url: all attempts together get at
# most this long before the fallback (app_json) or the apology plays. Carriers commonly cancel
# an unanswered call at ~30 s; cluster_config webhook.first_reply_deadline_seconds overrides it.
WEBHOOK_FIRST_REPLY_DEADLINE_SECONDS = 8
# ws(s):// call handlers: subprotocol audio.<vendor>.org, bounded reconnect backoff
WS_DEFAULT_VENDOR = "saas-sbc"
WS_RECONNECT_DELAYS_SECONDS = (0.5, 1.0, 2.0, 4.0)  # one delay per reconnect attempt, then give up
WS_ACK_TIMEOUT_SECONDS = 10.0  # same budget as one HTTP attempt

# Queue callbacks
CALLBACK_MAX_ATTEMPTS = 3
# A customer not reached (no answer, busy, failed) is dialled again no sooner than this after
# that attempt's outcome (callbacks.last_attempt_at): an immediate redial mostly finds the line
# busy or the person away again.
CALLBACK_RETRY_DELAY_SECONDS = 120
# How long the customer's phone rings on each attempt.
CALLBACK_RING_TIMEOUT_SECONDS = 30
# The dispatcher also looks for work this often (an agent already available when a callback is
# created, or a retry delay that ran out while no agent changed state).
CALLBACK_SWEEP_INTERVAL_SECONDS = 5
# A callback still ``dialing`` this long after its attempt began lost its outcome (no controller
# took the call.originate, or the one that did died mid-ring): the attempt counts as not
# reached. Ring timeout + the originator's result margin + the dispatch deadline, with room.
CALLBACK_DIALING_STALE_SECONDS = 300
# The callback-call mark (call id → agent) lives at most this long: a callback call longer than
# this ends without sending the agent to wrap-up (the agent sets itself available).
CALLBACK_CALL_MARK_TTL_SECONDS = 12 * 3600
# The agent's engaged mark for a callback call (nobody refreshes it, unlike a queue offer's):
# removed by the call's call.ended (also written for calls a dead controller left behind,
# app/calls/recovery.py); this TTL only bounds a lost one. A callback call longer than this
# leaves the agent offerable again if it sets itself available meanwhile.
CALLBACK_ENGAGED_TTL_SECONDS = 3600

# Gateway health: SIP OPTIONS interval (FreeSWITCH gateway `ping`)
GATEWAY_PING_SECONDS = 30
# Outbound registration to a carrier (sofia gateway expire-seconds / retry-seconds): product
# bounds. Below a minute a REGISTER storm; above a day a lost binding goes unnoticed too long.
GATEWAY_REGISTER_EXPIRY_DEFAULT_SECONDS = 600
GATEWAY_REGISTER_EXPIRY_MIN_SECONDS = 60
GATEWAY_REGISTER_EXPIRY_MAX_SECONDS = 86400
GATEWAY_REGISTER_RETRY_DEFAULT_SECONDS = 30
GATEWAY_REGISTER_RETRY_MIN_SECONDS = 5
GATEWAY_REGISTER_RETRY_MAX_SECONDS = 3600
# A registrar given by host name: its name is resolved again this often, so the ACL follows
# the carrier's DNS (app/routing/registrar_hosts.py). Five minutes: a carrier that moves its
# signalling address announces it well ahead; a shorter period only adds DNS queries.
REGISTRAR_RESOLVE_SECONDS = 300

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
# last_used_at of an API key is rewritten at most this often (one UPDATE a minute per busy key)
API_KEY_LAST_USED_RESOLUTION_SECONDS = 60
# POST /api/calls: a request no controller (with a connected FreeSWITCH) takes within this time
# is failed with no_freeswitch and never dialled later (app/calls/call_state.py)
ORIGINATE_DISPATCH_DEADLINE_SECONDS = 30
# how long GET /api/calls/:callId can see a call's live state (the record stays forever)
CALL_STATE_TTL_SECONDS = 24 * 3600
# Supervisor listen/whisper/barge (app/calls/supervision.py): how long the supervisor's phone
# rings before the supervision fails, and how often the controller checks the supervisor's
# leg is still up (call.control.stop comes at most this late)
SUPERVISOR_RING_SECONDS = 30
SUPERVISION_POLL_SECONDS = 1.0

# Concurrency limiter (Redis): a call's slot expires unless its controller refreshes it, so a
# crashed controller's calls free their slots after at most the TTL.
LIMITER_SLOT_TTL_SECONDS = 90
LIMITER_REFRESH_SECONDS = 30

# Event bus: publisher confirms wait at most this long; reconnect backoff grows to the cap.
EVENT_CONFIRM_TIMEOUT_SECONDS = 10
EVENT_RECONNECT_BACKOFF_SECONDS = (0.2, 30.0)  # first delay, cap (doubling in between)
EVENT_OUTBOX_BATCH = 200
# After a partial batch the relay lets rows gather this long before claiming again: under load
# every emit wakes it, and one claim + one update per event cost the controller a fifth of its
# CPU on the real switch (py-spy, 25 calls/s). Events reach the broker this much later at most.
EVENT_RELAY_COALESCE_SECONDS = 0.05
# The controller's event writer lets a call's events gather this long after the first one
# before it writes them: a call emits ~6 events in bursts, and each write is a transaction
# with its own disk flush (4.4 WAL syncs per call measured at 20 calls/s before). Bus events
# and a finishing call's record are delayed this much at most.
EVENT_WRITE_COALESCE_SECONDS = 0.01
EVENT_OUTBOX_RETENTION_SECONDS = 24 * 3600  # published rows older than this are pruned
SERVICE_HEARTBEAT_SECONDS = 30

# Ops endpoints (/healthz, /readyz, /metrics): the API serves them on its own port; controller
# and workers get a small HTTP listener of their own (cluster_config health.*_port, 0 = off).
HEALTH_CONTROLLER_PORT = 8085
HEALTH_WORKERS_PORT = 8086
READINESS_CHECK_TIMEOUT_SECONDS = 2.0   # per dependency probe: /readyz answers within ~this
# `sbc controller --processes N`: the supervisor's /readyz asks each child's /readyz, which
# itself takes up to READINESS_CHECK_TIMEOUT_SECONDS; a child silent past this is unreachable.
CHILD_READINESS_TIMEOUT_SECONDS = READINESS_CHECK_TIMEOUT_SECONDS + 1.0

# Interaction summary: a caller who abandons within this many seconds of queueing is a
# short abandon (not counted against service level).
SHORT_ABANDON_SECONDS = 5
# Disposition code an agent sets on its interaction (interaction_summary.disposition is
# varchar(64)): 1 to this many characters, no control characters.
DISPOSITION_MIN_LENGTH = 1
DISPOSITION_MAX_LENGTH = 64
# The note beside a campaign contact's disposition (admin route and agent channel).
CAMPAIGN_DISPOSITION_NOTE_MAX_LENGTH = 2000

# JSON accepted by the API (request bodies and pagination cursors; app/api/json_body.py).
# Deepest nesting of objects/arrays: a verb list with a nested gather/say is ~6 levels, a flow
# graph ~5; past this the parser's recursion, not the data, would be what is being tested.
JSON_MAX_DEPTH = 32
# Integers must fit PostgreSQL's bigint (and jsonb round-trips them exactly within it).
JSON_MIN_INTEGER = -(2**63)
JSON_MAX_INTEGER = 2**63 - 1
# PostgreSQL ``integer`` columns (and SQL functions taking one): larger values reach the database
# as bigint and fail there (out of range, or no such function signature), so fields bound for
# them are capped here.
PG_INTEGER_MAX = 2**31 - 1
# LCR route regexes (RE2): memory one compiled route may use (program + DFA cache). Real routes
# use a few KiB; a pattern whose program does not fit is refused on save (invalid_route_regex).
ROUTE_REGEX_MAX_MEMORY_BYTES = 1024 * 1024
# LCR route regex length in characters (1..this): the API schema (OpenAPI maxLength), the
# router's compiler and the lcr_routes CHECK constraint (migration 0001) all use this one figure.
ROUTE_REGEX_MAX_LENGTH = 255
# API: ``Retry-After`` (seconds) of a 503 ``database_unavailable`` (PostgreSQL cannot be reached).
DATABASE_UNAVAILABLE_RETRY_AFTER_SECONDS = 5

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
QUEUE_MAX_OFFER_TIMEOUT_SECONDS = 300
QUEUE_MAX_WRAP_UP_SECONDS = 3600
# How often a waiting caller tries to claim an agent (the hold music is cut into rounds this
# long: playback_timeout_sec takes whole seconds and is ignored below 2)
QUEUE_CLAIM_INTERVAL_SECONDS = 2
# Queue distribution (docs/agents.md "Strategies"): membership tiers 1 (offered first) to 9;
# ring_all rings at most this many agents of the best tier at once (the longest idle first:
# one bridge with that many legs, each a SIP INVITE from the caller's switch).
QUEUE_MIN_TIER = 1
QUEUE_MAX_TIER = 9
QUEUE_RING_ALL_MAX_LEGS = 20
# A FreeSWITCH node's agent (internal) profile port when freeswitch.nodes does not say
# (fs-conf/vars.xml agent_sip_port's default): where the other nodes send cross-node offers.
AGENT_SIP_PORT = 5070
# The header a cross-node offer carries: the agent's domain, which the agent's node bridges
# to (dialplan/agents.xml); the request URI's host is the node's address, not the domain.
CROSS_NODE_DOMAIN_HEADER = "X-SBC-Agent-Domain"
# Caller priority on the queue verb: higher is served first.
QUEUE_MIN_PRIORITY = 0
QUEUE_MAX_PRIORITY = 100
QUEUE_MAX_SHORT_ABANDON_SECONDS = 300
QUEUE_MAX_SERVICE_LEVEL_SECONDS = 3600
QUEUE_DEFAULT_SERVICE_LEVEL_SECONDS = 20   # answered within this = within the service level
# EWT: the last this-many handle times (answer to hang-up) of a queue, kept at most this long
QUEUE_EWT_SAMPLES = 50
QUEUE_EWT_WINDOW_SECONDS = 3600
# queue.metrics: one per queue with waiting callers or members, every period, emitted by one
# controller per period (a Redis lock); service level over the answers of the last window
QUEUE_METRICS_PERIOD_SECONDS = 30
QUEUE_SERVICE_LEVEL_WINDOW_SECONDS = 900
# The console's live view (docs/api.md "Live view"): a stream ticket is good once, for this
# long after the authenticated POST that issued it (EventSource cannot send a header, so the
# token never goes in the stream's URL); a quiet stream sends a comment this often, which
# finds pages that went away; a page whose events pile up past the buffer (it stopped
# reading) is cut off and reconnects with a new ticket.
LIVE_VIEW_TICKET_TTL_SECONDS = 30
LIVE_VIEW_KEEPALIVE_SECONDS = 15
LIVE_VIEW_STREAM_BUFFER = 256
# how often the live view's hub looks whether its bus consumer holds the broker: a change is
# pushed to the pages (``bus`` event: "Live updates paused"), and on the way back each page
# gets a fresh snapshot (the events missed meanwhile are not replayed)
LIVE_VIEW_BUS_CHECK_SECONDS = 1.0
# gateway -> owner account pairs the live view's hub remembers (gateway events carry no account)
LIVE_VIEW_GATEWAY_OWNERS_CACHED = 10000
# calls in progress a snapshot lists (newest first); the count ``callsInProgress`` is exact
LIVE_VIEW_CALLS_LISTED = 200
# A recording's media ticket (docs/api.md "Call records"): the console's <audio> player cannot
# send the token, so it streams /api/recordings/:id/stream?ticket=… with HTTP Range; the ticket
# opens that one recording for this long (several Range requests: one playback seeks).
RECORDING_MEDIA_TICKET_TTL_SECONDS = 300
# The console's waveform under the player (GET /api/recordings/:id/peaks): this many peaks per
# recording, kept in Redis this long (a recording's file does not change once written; the key
# names its size and modification time all the same).
RECORDING_PEAKS = 200
RECORDING_PEAKS_CACHE_SECONDS = 24 * 3600
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

# Media pipeline (app/media). Product bounds, not from SPEC's Limits table.
# A job is delivered at most this many times (worker crash, model error, file not yet visible
# on the shared volume); then it ends in media.transcription.failed and the dead-letter queue.
MEDIA_JOB_MAX_DELIVERIES = 3
MEDIA_JOB_RETRY_DELAY_SECONDS = (1.0, 10.0)      # before a requeue: first, cap (doubling)
# The call record is written at hangup, next to RECORD_STOP; the worker waits this long for it
# before transcribing, so sentiment and has_transcript land on the record.
MEDIA_CALL_RECORD_WAIT_SECONDS = 15
MEDIA_MAX_RECORDING_SECONDS = 4 * 3600           # longer files are refused (too_long)
MEDIA_ENGINE_SAMPLE_RATE = 16000                 # what all three engines are given
MEDIA_WORKERS_MAX = 16                           # transcription.workers upper bound

# Controller overload (app/voice/overload.py, app/voice/orphans.py). Product bounds: a call the controller
# cannot set up promptly is turned away (503, the carrier fails over) instead of ringing.
CONTROLLER_MAX_SETUPS_IN_FLIGHT = 200   # sockets accepted, not yet admitted or refused
CONTROLLER_MAX_LOOP_LAG_MS = 500        # event-loop delay above which new calls are shed
CONTROLLER_LAG_PROBE_SECONDS = 0.1      # how often the loop delay is sampled
ORPHAN_SWEEP_SECONDS = 5                # how often each switch is checked for orphan channels
ORPHAN_GRACE_SECONDS = 10               # a channel this old in `socket` with no session is orphan
# `sbc controller --processes N` (app/calls/siblings.py): each process publishes its calls
CONTROLLER_SIBLING_PUBLISH_SECONDS = 1.0  # how often each sibling rewrites its set of calls
CONTROLLER_SIBLING_TTL_SECONDS = 10.0     # a set not refreshed this long (process dead) expires
CONTROLLER_MAX_PROCESSES = 64             # upper bound of --processes
# The controller's Redis pool (app/redis_pool.py): past the maximum a greenlet waits for a
# free connection, at most the timeout (redis-py's default pool fails past 100).
CONTROLLER_REDIS_MAX_CONNECTIONS = 512
CONTROLLER_REDIS_POOL_WAIT_SECONDS = 5.0

# The agent channel (docs/agents.md "The agent channel"): the first message must be the auth
# message within this long; frames above the size are refused (close 1009); pings keep
# proxies from idling the socket out and find dead peers; a socket whose outgoing messages
# pile up past the queue size (a client that stopped reading) is closed.
AGENT_CHANNEL_AUTH_TIMEOUT_SECONDS = 5.0
AGENT_CHANNEL_MAX_MESSAGE_BYTES = 64 * 1024
AGENT_CHANNEL_PING_SECONDS = 25
AGENT_CHANNEL_OUTBOX_SIZE = 256
AGENT_CHANNEL_DTMF_MAX_DIGITS = 32
AGENT_CHANNEL_ID_MAX_CHARS = 64
# Commands per agent-channel socket (docs/agents.md "Rate limit"): a token bucket of
# AGENT_CHANNEL_COMMAND_BURST tokens refilled at AGENT_CHANNEL_COMMANDS_PER_SECOND; every frame
# after the auth message takes one. A person at an agent UI sends a few commands a second at
# most (keypad DTMF is the fastest: one command per key); the burst covers an SDK replaying
# its state on reconnect. Before: 300 setState in 3.9 s were all served (300 transactions, 300
# bus events). A frame over the bucket gets ``rate_limited``; this many in a row close the
# socket with 4029.
AGENT_CHANNEL_COMMANDS_PER_SECOND = 5.0
AGENT_CHANNEL_COMMAND_BURST = 20
AGENT_CHANNEL_RATE_STRIKES = 10

# Login throttle (app/accounts/login_throttle.py has the reasons; docs/api.md "Login rate
# limiting"). Per (tenant, username, client address): LOGIN_PAIR_FREE_FAILURES failures, then
# each further attempt waits LOGIN_PAIR_BASE_DELAY_SECONDS doubled per failure, at most
# LOGIN_PAIR_MAX_DELAY_SECONDS; failures are remembered LOGIN_PAIR_WINDOW_SECONDS. Per address:
# LOGIN_ADDRESS_FAILURE_LIMIT failures per LOGIN_WINDOW_SECONDS (sliding). Per user, across
# addresses: LOGIN_USER_FAILURE_LIMIT per LOGIN_WINDOW_SECONDS, not applied to an address the
# user signed in from within LOGIN_KNOWN_ADDRESS_SECONDS.
LOGIN_WINDOW_SECONDS = 15 * 60
LOGIN_PAIR_FREE_FAILURES = 3
LOGIN_PAIR_BASE_DELAY_SECONDS = 2
LOGIN_PAIR_MAX_DELAY_SECONDS = 15 * 60
LOGIN_PAIR_WINDOW_SECONDS = 24 * 3600
LOGIN_ADDRESS_FAILURE_LIMIT = 20
LOGIN_USER_FAILURE_LIMIT = 30
LOGIN_KNOWN_ADDRESS_SECONDS = 30 * 24 * 3600

# Second factor (docs/api.md "Second factor (TOTP)"): RFC 6238 defaults every authenticator app
# understands (30 s steps, 6 digits, SHA-1); one step either side accepted for clock drift and
# typing time; 10 single-use recovery codes of 16 base32 characters (80 bits each).
TOTP_STEP_SECONDS = 30
TOTP_DIGITS = 6
TOTP_DRIFT_STEPS = 1
RECOVERY_CODE_COUNT = 10
RECOVERY_CODE_LENGTH = 16
# Restricted tokens between the password and the session: the code challenge after a verified
# password, and the enrol-only token a user of a tenant that requires TOTP gets until enrolled.
MFA_CHALLENGE_SECONDS = 5 * 60
MFA_ENROLMENT_TOKEN_SECONDS = 15 * 60
# OIDC single sign-on (docs/sso.md): a started sign-in (state, nonce, PKCE verifier in Redis) is
# good for SSO_STATE_SECONDS, used once; each request to the identity provider (discovery, token,
# JWKS) is bounded in time and size; an ID token's exp/iat are accepted SSO_CLOCK_SKEW_SECONDS
# late/early (clocks of two organisations); the role claim's values read at most
# SSO_ROLE_CLAIM_VALUES_MAX; at most SSO_ROLE_MAPPING_MAX mapping rules per tenant.
SSO_STATE_SECONDS = 10 * 60
SSO_HTTP_TIMEOUT_SECONDS = 5.0
SSO_HTTP_MAX_BYTES = 256 * 1024
SSO_CLOCK_SKEW_SECONDS = 60
SSO_ROLE_CLAIM_VALUES_MAX = 100
SSO_ROLE_MAPPING_MAX = 50

# Live call control from the REST API (docs/api.md "Controlling a live call";
# app/calls/live_calls.py). Every call a controller drives has a registry key with this TTL,
# refreshed every LIVE_CALL_REFRESH_SECONDS while the call lives (a dead controller's calls
# drop out within the TTL). The API waits at most LIVE_CONTROL_REPLY_SECONDS for the
# controller's answer to one action.
LIVE_CALL_TTL_SECONDS = 60.0
LIVE_CALL_REFRESH_SECONDS = 15.0
LIVE_CONTROL_REPLY_SECONDS = 8.0
LIVE_CONTROL_HANGUP_REASON_MAX = 64
LIVE_CONTROL_WHISPER_TEXT_MAX = 1000
# a blind transfer: the caller's new verbs wait at most this long for its bridge to the agent
# to return after the agent's leg was killed (it takes milliseconds; past this they run anyway)
TRANSFER_BRIDGE_RETURN_SECONDS = 5.0

# Uploaded hold music (PUT /api/moh/:name, app/media/moh_uploads.py): the raw body's size, the
# decoded audio's length (at least a second; an MP3 of a few MiB can decode to hours), and files per account.
MOH_UPLOAD_MAX_BYTES = 10 * 1024 * 1024
MOH_UPLOAD_MAX_SECONDS = 15 * 60
MOH_UPLOAD_MIN_SECONDS = 1  # shorter is a click on a loop, not music
MOH_MAX_FILES_PER_ACCOUNT = 20

# Outbound campaigns (docs/campaigns.md)
# contacts in one JSON request (POST /api/campaigns/:id/contacts)
CAMPAIGN_CONTACTS_JSON_MAX = 1000
# data rows in one CSV upload (contacts or do-not-call); a bigger list is split by the client:
# the whole file is validated before anything is written, so it is held in memory once
CAMPAIGN_CSV_MAX_ROWS = 10_000
# bytes of one CSV upload: 10,000 rows of number, name, time zone and a few attributes
CAMPAIGN_CSV_MAX_BYTES = 2 * 1024 * 1024
# the calling window when a campaign names none: contact local time, [start, end)
CAMPAIGN_DEFAULT_WINDOW = ("08:00", "21:00")
# retries when the campaign's retry_policy names no rule for an outcome: (delay s, max attempts)
CAMPAIGN_DEFAULT_RETRIES = {
    "busy": (600, 3),
    "no_answer": (3600, 3),
    "machine": (4 * 3600, 2),
    "failed": (1800, 2),
    "abandoned": (3600, 3),
}
CAMPAIGN_RETRY_MAX_ATTEMPTS = 10
CAMPAIGN_RETRY_MAX_DELAY_SECONDS = 7 * 24 * 3600
# power mode: lines per available agent (default, and the range a campaign may set)
CAMPAIGN_POWER_RATIO_DEFAULT = 2.0
CAMPAIGN_POWER_RATIO_RANGE = (1.0, 5.0)
# predictive mode: abandoned live answers over all live answers of the rolling window, percent
CAMPAIGN_ABANDON_CAP_PERCENT_DEFAULT = 3.0
# the abandon rate's denominator is at least this many live answers: with the 3 % cap, the
# first 3 abandons of a window never trip the 1:1 fallback, the 4th within 100 answers does
CAMPAIGN_ABANDON_RATE_MIN_ANSWERS = 100
# a live answer not connected to an agent within this long counts as abandoned
CAMPAIGN_ABANDON_CONNECT_SECONDS = 2.0
# power/predictive: how often an answered customer waiting (≤ the 2 s above) asks the claim
# queue for a free agent of its group (a queue caller asks every QUEUE_CLAIM_INTERVAL_SECONDS)
CAMPAIGN_WAIT_CLAIM_INTERVAL_SECONDS = 0.2
# the campaign's safe-harbour message: said text, or a recording's URL
CAMPAIGN_SAFE_HARBOUR_TEXT_MAX = 500
CAMPAIGN_SAFE_HARBOUR_URL_MAX = 2048
# measured events kept per campaign in Redis for pacing (dial outcomes, live answers, handle
# times): enough for pacing.SAMPLES of each kind over the rolling window
CAMPAIGN_MEASURES_MAX = 2000
# do-not-call entries added in one JSON request
DNC_JSON_MAX = 1000
# pacing (app/campaigns/pacing.py): the rolling window the abandon rate and the answer rate are
# measured over (a regulator's period is longer — 24 h in the UK, 30 days in the US — so a
# campaign that stays under the cap over every hour also stays under it over the day)
CAMPAIGN_PACING_WINDOW_SECONDS = 3600
# predictive mode dials 1:1 until it has measured this many dial outcomes, then for its ready agents
# only (agents on a call never counted as about to be free) until this many handle times. The
# first calls to end are the short ones, and a model fed only those expects agents to free up
# sooner than they do (abandons just after the warm-up); 20 handle times were as safe as 40 in
# the benchmark (tuning seeds) and end the warm-up a few minutes sooner
CAMPAIGN_PACING_WARMUP_OUTCOMES = 50
CAMPAIGN_PACING_WARMUP_HANDLES = 20
# lines in flight per logged-in agent never exceed this, whatever the model says
CAMPAIGN_PACING_MAX_LINES_PER_AGENT = 6
# the dialer's lease on a running campaign (app/campaigns/lease.py): renewed every second or
# so by its holder; a holder that dies loses it after this long and another instance takes over
CAMPAIGN_LEASE_TTL_SECONDS = 5
# the dialer loop (app/campaigns/dialer.py) paces every running campaign it leases this often:
# a fifth of the lease's TTL, so a holder renews four times before its lease could lapse
CAMPAIGN_DIAL_INTERVAL_SECONDS = 1.0
# how long a contact's phone rings on each attempt before it counts as ``no_answer``
CAMPAIGN_RING_TIMEOUT_SECONDS = 30
# Answering-machine detection's message mode (app/voice/amd.py): how long after the answer a
# machine's beep is waited for. Measured: the test greeting's beep (a 4.5 s greeting) is
# reported 4.9 s after the answer; recorded greetings run 5-15 s. Without a beep by then the
# message is left all the same (some voicemails do not beep).
CAMPAIGN_AMD_BEEP_WAIT_SECONDS = 20
# ... and once the beep is heard, the message waits for the beep's *end*: mod_avmd reports a
# beep 70-90 ms into it (measured: 4.894-4.917 s after the answer for the test greeting's 0.5 s
# beep from 4.824 s), and a message started then plays over the rest of the beep, which a voicemail
# does not record (it records from the beep's end). mod_dptools' ``detect_silence`` returns
# after more than CAMPAIGN_AMD_BEEP_END_SILENT_FRAMES frames (20 ms each) whose mean absolute
# 16-bit sample is at most CAMPAIGN_AMD_BEEP_END_THRESHOLD (a -6 dBFS beep scores about 10 000,
# the idle line after it under 10), or after CAMPAIGN_AMD_BEEP_END_WAIT_SECONDS: a longer tone,
# or a line noisier than the threshold, delays the message by that much at most
CAMPAIGN_AMD_BEEP_END_THRESHOLD = 200
CAMPAIGN_AMD_BEEP_END_SILENT_FRAMES = 5
CAMPAIGN_AMD_BEEP_END_WAIT_SECONDS = 2.0
# preview mode (app/campaigns/preview.py): how long an agent has to accept or skip an offered
# contact before it returns to the pool and the agent is released. Long enough to read a
# contact's attributes; far below the claimed agent's engaged mark (CALLBACK_ENGAGED_TTL_SECONDS)
CAMPAIGN_PREVIEW_OFFER_SECONDS = 30
# the campaign-call mark (call id → campaign, contact) that lets call.ended find the contact:
# bounds a call whose call.ended is lost (the contact then stays in_progress, see docs)
CAMPAIGN_CALL_MARK_TTL_SECONDS = 12 * 3600
# an attempt still ``in_progress`` this long after it was dialled, whose call holds no
# concurrency slot (neither ringing nor live on any controller), lost its call.ended: its
# outcome is taken from its call record, or ``failed`` when it has none (a controller died
# while it rang). Ring timeout + the originator's result margin + relay delays, with room.
CAMPAIGN_ATTEMPT_STALE_SECONDS = 300

# Attended transfers (docs/agents.md "Attended transfers"): how long the consulted party's
# phone rings before the consultation ends by itself (the agent is back with its caller).
CONSULT_RING_SECONDS = 30
# How long a swap or a three-way call waits for the consulted leg to park after the agent's leg
# left their bridge, before moving it on (a move landing while the bridge was still ending was
# lost on the real switch: the leg stayed in CS_ROUTING).
CONSULT_PARK_WAIT_SECONDS = 2.0
# How long the caller, in the two-party room of a completed or cancelled consultation, waits
# for the other leg to be a member too: a leg that died on its way in never ends the room
# (``endconf`` ends it when a member leaves), so the caller would wait alone for ever; past
# this it is taken out of the room (app/verbs/consult_hold.py).
CONSULT_ROOM_JOIN_SECONDS = 5.0
