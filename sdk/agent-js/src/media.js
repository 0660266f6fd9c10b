/**
 * The media leg: a JsSIP user agent registered on the `internal` agent profile over WSS
 * (docs/agents.md: `sip:<sip_username>@<sip_domain>`, digest credentials per agent), which
 * receives the offer's ring as an INVITE and answers it when the agent accepts.
 *
 * DTLS-SRTP only (SPEC: "Browser agent legs use DTLS-SRTP"): WebRTC itself never sends plain
 * RTP, and an INVITE whose SDP is not `UDP/TLS/RTP/SAVPF` with a DTLS fingerprint is refused
 * with 488 before the browser sees it.
 *
 * Events: `registered`, `unregistered`, `registrationFailed` (AgentError), `incoming`
 * (JsSIP RTCSession), `sessionEnded` ({session, cause, originator}), `media` ({state, stream?}),
 * `error` (AgentError).
 */
import JsSIPDefault from 'jssip';
import { Emitter } from './emitter.js';
import { AgentError, ErrorCodes } from './errors.js';

/** @typedef {import('jssip/lib/RTCSession.js').RTCSession} RTCSession */

export const DEFAULT_WSS_PORT = 7443;

/**
 * Is this remote SDP DTLS-SRTP (the only media the agent leg accepts)? Every audio line must be
 * a secure profile (`UDP/TLS/RTP/SAVPF`, or `RTP/SAVPF` as FreeSWITCH writes it for WebRTC
 * legs) and the SDP must carry a DTLS fingerprint; plain `RTP/AVP` is refused.
 * @param {string | null | undefined} sdp
 * @returns {boolean}
 */
export function isDtlsSrtp(sdp) {
  const text = String(sdp || '');
  const audio = text.split(/\r?\n/).filter((line) => line.startsWith('m=audio'));
  return audio.length > 0 && audio.every((line) => /^m=audio \d+ (UDP\/TLS\/)?RTP\/SAVPF? /.test(line))
    && /^a=fingerprint:/im.test(text);
}

export class MediaLeg extends Emitter {
  /**
   * @param {{credentials: {username: string, password: string, domain: string, wsUrl: string},
   *          JsSIP?: any, mediaConstraints?: MediaStreamConstraints, pcConfig?: RTCConfiguration,
   *          remoteAudio?: HTMLAudioElement | false, debug?: boolean}} options
   */
  constructor({ credentials, JsSIP = JsSIPDefault, mediaConstraints = { audio: true, video: false },
    pcConfig = { iceServers: [] }, remoteAudio, debug = false }) {
    super();
    this.credentials = credentials;
    this._JsSIP = JsSIP;
    this._constraints = mediaConstraints;
    this._pcConfig = pcConfig;
    this._remoteAudio = remoteAudio;
    this._debug = debug;
    /** @type {any} a JsSIP UA */
    this.ua = null;
    /** @type {RTCSession | null} the ringing INVITE not yet answered */
    this.ringing = null;
    /** @type {RTCSession | null} the answered session */
    this.session = null;
    this.registered = false;
    /** @type {MediaStream | undefined} the caller's audio */
    this.remoteStream = undefined;
  }

  start() {
    if (this.ua) return;
    const { username, password, domain, wsUrl } = this.credentials;
    const JsSIP = this._JsSIP;
    if (this._debug) JsSIP.debug.enable('JsSIP:*'); else JsSIP.debug.disable();
    const socket = new JsSIP.WebSocketInterface(wsUrl);
    this.ua = new JsSIP.UA({
      sockets: [socket],
      uri: `sip:${username}@${domain}`,
      authorization_user: username,
      password,
      realm: domain,
      register: true,
      register_expires: 120,
      session_timers: false,
      user_agent: 'saas-sbc-agent-sdk',
      connection_recovery_min_interval: 1,
      connection_recovery_max_interval: 15,
    });
    this.ua.on('registered', () => {
      this.registered = true;
      this.emit('registered');
    });
    this.ua.on('unregistered', () => {
      this.registered = false;
      this.emit('unregistered');
    });
    this.ua.on('registrationFailed', (/** @type {{cause: string}} */ event) => {
      this.registered = false;
      this.emit('registrationFailed', new AgentError(ErrorCodes.REGISTRATION_FAILED,
        `The media leg could not register: ${event.cause}`, { details: { cause: event.cause } }));
    });
    this.ua.on('newRTCSession', (/** @type {{originator: string, session: RTCSession, request: any}} */ event) => {
      if (event.originator === 'remote') this._incoming(event.session, event.request);
    });
    this.ua.start();
  }

  stop() {
    if (!this.ua) return;
    const ua = this.ua;
    this.ua = null;
    try { ua.stop(); } catch { /* already stopped */ }
    this.registered = false;
  }

  /**
   * @param {RTCSession} session
   * @param {{body?: string} | null} request the INVITE
   */
  _incoming(session, request) {
    if (!isDtlsSrtp(request && request.body)) {
      session.terminate({ status_code: 488, reason_phrase: 'DTLS-SRTP Only' });
      const media = (String(request && request.body).match(/^m=audio.*$/m) || ['no audio'])[0];
      this.emit('error', new AgentError(ErrorCodes.MEDIA_FAILED, `An offer without DTLS-SRTP was refused (488): ${media}.`,
        { details: { sdp: request && request.body } }));
      return;
    }
    if (this.ringing || this.session) {
      session.terminate({ status_code: 486, reason_phrase: 'Busy Here' });
      return;
    }
    this.ringing = session;
    session.on('failed', (event) => this._ended(session, event.cause, event.originator));
    session.on('ended', (event) => this._ended(session, event.cause, event.originator));
    session.on('confirmed', () => this.emit('confirmed', session));
    session.on('peerconnection', (event) => this._watchPeer(event.peerconnection));
    session.on('hold', () => this.emit('media', { state: 'held' }));
    session.on('unhold', () => this.emit('media', { state: session.isMuted().audio ? 'muted' : 'connected' }));
    session.on('muted', () => this.emit('media', { state: 'muted' }));
    session.on('unmuted', () => this.emit('media', { state: session.isOnHold().local ? 'held' : 'connected' }));
    this.emit('incoming', session);
  }

  /**
   * Wait up to `timeoutMs` for the ring (the channel's offer can arrive before the INVITE).
   * @param {number} timeoutMs
   * @returns {Promise<RTCSession>}
   */
  waitRinging(timeoutMs) {
    if (this.ringing) return Promise.resolve(this.ringing);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.off('incoming', onIncoming);
        reject(new AgentError(ErrorCodes.MEDIA_FAILED, `No call reached the media leg in ${timeoutMs} ms.`));
      }, timeoutMs);
      const onIncoming = (/** @type {RTCSession} */ session) => {
        clearTimeout(timer);
        this.off('incoming', onIncoming);
        resolve(session);
      };
      this.on('incoming', onIncoming);
    });
  }

  /**
   * Answer the ringing INVITE (microphone, DTLS-SRTP).
   * @param {RTCSession | null} [session]
   * @returns {RTCSession}
   */
  answer(session = this.ringing) {
    if (!session) throw new AgentError(ErrorCodes.MEDIA_FAILED, 'Nothing is ringing on the media leg.');
    this.ringing = null;
    this.session = session;
    session.answer({ mediaConstraints: this._constraints, pcConfig: this._pcConfig });
    return session;
  }

  /**
   * Decline the ringing INVITE: 603 Decline is CALL_REJECTED, the platform's agent.reject.
   * @param {RTCSession | null} [session]
   */
  decline(session = this.ringing) {
    if (!session) return;
    this.ringing = null;
    try { session.terminate({ status_code: 603, reason_phrase: 'Decline' }); } catch { /* gone */ }
  }

  hangup() {
    const session = this.session || this.ringing;
    if (!session) return false;
    try { session.terminate(); } catch { /* gone */ }
    return true;
  }

  hold() { return this._withSession((s) => s.hold()); }
  unhold() { return this._withSession((s) => s.unhold()); }
  mute() { return this._withSession((s) => s.mute({ audio: true })); }
  unmute() { return this._withSession((s) => s.unmute({ audio: true })); }
  /** @param {string} digits */
  sendDtmf(digits) { return this._withSession((s) => s.sendDTMF(digits, { transportType: /** @type {any} JsSIP's enum value */ ('RFC2833') })); }

  get live() {
    return Boolean(this.session && this.session.isEstablished && this.session.isEstablished());
  }

  /** @param {(session: RTCSession) => void} action */
  _withSession(action) {
    if (!this.session || !this.live) return false;
    action(this.session);
    return true;
  }

  /** @param {RTCPeerConnection} pc */
  _watchPeer(pc) {
    pc.addEventListener('track', (event) => {
      const stream = event.streams && event.streams[0];
      if (!stream) return;
      this.remoteStream = stream;
      const audio = this._audioElement();
      if (audio) {
        audio.srcObject = stream;
        const played = audio.play && audio.play();
        if (played && played.catch) played.catch(() => {});
      }
    });
    pc.addEventListener('connectionstatechange', () => {
      if (pc.connectionState === 'connected') this.emit('media', { state: 'connected', stream: this.remoteStream || null });
      if (pc.connectionState === 'failed') {
        this.emit('media', { state: 'failed' });
        this.emit('error', new AgentError(ErrorCodes.MEDIA_FAILED, 'The media connection failed (ICE/DTLS).'));
      }
    });
  }

  _audioElement() {
    if (this._remoteAudio === false) return null;
    if (this._remoteAudio) return this._remoteAudio;
    if (typeof globalThis.Audio !== 'function') return null;
    this._remoteAudio = new globalThis.Audio();
    this._remoteAudio.autoplay = true;
    return this._remoteAudio;
  }

  /**
   * @param {RTCSession} session
   * @param {string} cause JsSIP's cause
   * @param {string} originator
   */
  _ended(session, cause, originator) {
    if (this.ringing === session) this.ringing = null;
    if (this.session === session) this.session = null;
    const causes = this._JsSIP.C.causes;
    if (cause === causes.USER_DENIED_MEDIA_ACCESS) {
      this.emit('error', new AgentError(ErrorCodes.MICROPHONE_DENIED, 'The microphone was not allowed.'));
    } else if ([causes.WEBRTC_ERROR, causes.BAD_MEDIA_DESCRIPTION, causes.INCOMPATIBLE_SDP].includes(cause)) {
      this.emit('media', { state: 'failed' });
      this.emit('error', new AgentError(ErrorCodes.MEDIA_FAILED, `The media leg failed: ${cause}.`));
    }
    this.emit('sessionEnded', { session, cause, originator });
  }
}
