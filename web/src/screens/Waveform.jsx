import { useEffect, useState } from 'react';
import './waveform.css';

/** How far one key moves the playhead, in seconds (an <input type=range>'s keys). */
export const STEP_SECONDS = 5;
export const PAGE_SECONDS = 30;

/** The time a key asks for, or null for a key the control leaves alone. */
export function keyedTime(key, now, duration) {
  const to = {
    ArrowRight: now + STEP_SECONDS, ArrowUp: now + STEP_SECONDS,
    ArrowLeft: now - STEP_SECONDS, ArrowDown: now - STEP_SECONDS,
    PageUp: now + PAGE_SECONDS, PageDown: now - PAGE_SECONDS, Home: 0, End: duration,
  }[key];
  return to == null ? null : Math.min(Math.max(to, 0), duration);
}

/** The time at a click `x` pixels into a waveform `width` pixels wide. */
export function clickedTime(x, width, duration) {
  if (!(width > 0)) return 0;
  return Math.min(Math.max(x / width, 0), 1) * duration;
}

/**
 * A recording's waveform under its player (GET /api/recordings/:id/peaks: 200 peaks, 0..1).
 * The bars are decoration (aria-hidden); the control itself is a slider that seeks the player:
 * a click jumps to that point, the arrow keys move 5 s, Page Up/Down 30 s, Home/End to the ends.
 * The part already played is drawn darker.
 */
export function Waveform({ peaks, duration, audio, label }) {
  const [now, setNow] = useState(0);
  useEffect(() => {
    if (!audio) return undefined;
    const follow = () => setNow(audio.currentTime || 0);
    audio.addEventListener('timeupdate', follow);
    audio.addEventListener('seeked', follow);
    return () => { audio.removeEventListener('timeupdate', follow); audio.removeEventListener('seeked', follow); };
  }, [audio]);
  const seek = (t) => {
    if (audio) audio.currentTime = t;
    setNow(t);
  };
  const played = duration > 0 ? Math.round((now / duration) * peaks.length) : 0;
  return (
    <div className="waveform" role="slider" tabIndex={0} aria-label={label}
      aria-valuemin={0} aria-valuemax={Math.round(duration)} aria-valuenow={Math.round(now)}
      aria-valuetext={`${now.toFixed(1)} s of ${duration.toFixed(1)} s`}
      onClick={(e) => {
        const box = e.currentTarget.getBoundingClientRect();
        seek(clickedTime(e.clientX - box.left, box.width, duration));
      }}
      onKeyDown={(e) => {
        const to = keyedTime(e.key, now, duration);
        if (to == null) return;
        e.preventDefault();
        seek(to);
      }}>
      <svg aria-hidden="true" focusable="false" viewBox={`0 0 ${peaks.length} 100`} preserveAspectRatio="none">
        {peaks.map((p, n) => {
          const h = Math.max(p * 100, 1); // silence still draws a line
          // eslint-disable-next-line react/no-array-index-key -- the peaks are positions in time
          return <rect key={n} x={n + 0.15} width={0.7} y={50 - h / 2} height={h} className={n < played ? 'played' : undefined} />;
        })}
      </svg>
    </div>
  );
}
