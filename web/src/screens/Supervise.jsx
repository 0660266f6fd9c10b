import { useState } from 'react';
import { useAuth } from '../auth.jsx';
import { humanMessage } from '../messages.js';

/** The supervision API's refusals (docs/api.md "Supervising an agent's call") as what to do. */
export const SUPERVISE_MESSAGES = {
  no_agent_leg: 'No agent is talking on this call yet (IVR, queue or ringing).',
  supervisor_not_registered: 'Your phone is not registered: sign your softphone in, then try again.',
  supervisor_on_another_switch: 'Your phone is registered on another switch than this call: it cannot join.',
  supervisor_has_no_phone: 'You have no phone to ring: give your user an agent profile with SIP credentials.',
  cannot_supervise_own_call: 'This is your own call.',
  supervision_not_active: 'Your phone is still ringing: answer it before switching modes.',
  supervision_not_found: 'You are not supervising this call.',
  supervisor_required: 'Only a supervisor or an administrator can supervise calls.',
  call_not_found: 'The call has ended.',
};

export const MODES = [['listen', 'Listen'], ['whisper', 'Whisper'], ['barge', 'Barge']];

/**
 * Listen / Whisper / Barge / Stop for one call in progress: your own phone is rung and joins
 * (POST /api/calls/:callId/supervise); pressing another mode while connected switches modes,
 * Stop hangs your leg up (DELETE). The buttons say what was asked; the phone is the proof.
 */
export function Supervise({ callId, label }) {
  const { call } = useAuth();
  const [mode, setMode] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  async function send(method, body) {
    setBusy(true);
    setError(null);
    try {
      const answer = await call(`/api/calls/${callId}/supervise`, { method, body });
      setMode(method === 'DELETE' ? null : answer?.mode || body.mode);
    } catch (err) {
      setError(err);
      if (err.code === 'supervision_not_found' || err.code === 'call_not_found') setMode(null);
    } finally {
      setBusy(false);
    }
  }
  return (
    <div className="supervise" role="group" aria-label={`Supervise the call ${label}`}>
      {MODES.map(([value, text]) => (
        <button key={value} type="button" className={mode === value ? '' : 'secondary'} aria-pressed={mode === value}
          disabled={busy} onClick={() => send('POST', { mode: value })}>{text}</button>
      ))}
      {mode && <button type="button" className="secondary" disabled={busy} onClick={() => send('DELETE')}>Stop</button>}
      {mode && <span role="status">{`Your phone rings, then joins (${mode}).`}</span>}
      {error && <span className="form-error" role="alert">{SUPERVISE_MESSAGES[error.code] || humanMessage(error)}</span>}
    </div>
  );
}
