/**
 * Bus events for the live-view tests and benchmark: tests/console/bus_publish.py as a child
 * process (the product's outbox publisher relays what it emits to RabbitMQ). `send(request)`
 * resolves with its answer, `{emittedAt}`: the wall-clock ms just before the event was emitted.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

export function startBus({ python, root }) {
  const child = spawn(python, ['-m', 'tests.console.bus_publish'], { cwd: root, stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const waiting = [];
  lines.on('line', (line) => {
    const answer = JSON.parse(line);
    const next = waiting.shift();
    if (answer.error) next?.reject(new Error(answer.error));
    else next?.resolve(answer);
  });
  child.on('exit', (code) => {
    for (const w of waiting.splice(0)) w.reject(new Error(`bus_publish exited (${code})`));
  });
  return {
    send(request) {
      return new Promise((resolve, reject) => {
        waiting.push({ resolve, reject });
        child.stdin.write(`${JSON.stringify(request)}\n`);
      });
    },
    stop() {
      child.stdin.end();
      return new Promise((resolve) => { if (child.exitCode !== null) resolve(); else child.on('exit', resolve); });
    },
  };
}

/** In the page: resolves with Date.now() when `check()` first holds (a MutationObserver, no polling). */
export function watchFor(page, fnSource, arg) {
  return page.evaluate(([source, value]) => {
    const check = new Function('value', source); // eslint-disable-line no-new-func
    window.__seen = new Promise((resolve) => {
      if (check(value)) { resolve(Date.now()); return; }
      const observer = new MutationObserver(() => {
        if (check(value)) { observer.disconnect(); resolve(Date.now()); }
      });
      observer.observe(document.body, { subtree: true, childList: true, characterData: true });
    });
  }, [fnSource, arg]);
}

/** The text of the live view's Waiting cell for queue `name`. */
export const WAITING_IS = "const cell = document.querySelector(`tr[data-queue=\"${value.queue}\"] td`); return Boolean(cell) && cell.textContent === String(value.waiting);";
