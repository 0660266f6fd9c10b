/**
 * A small event emitter (the JsSIP/SIP.js style: `on`, `once`, `off`, `emit`), with no
 * dependency on node's `events` so the package stays the same in browsers and in node.
 * A handler that throws does not stop the other handlers; the error is re-thrown asynchronously
 * so it still reaches the page's error reporting.
 */
export class Emitter {
  constructor() {
    /** @type {Map<string, Set<Function>>} */
    this._handlers = new Map();
  }

  /**
   * @param {string} event
   * @param {Function} handler
   * @returns {this}
   */
  on(event, handler) {
    let handlers = this._handlers.get(event);
    if (!handlers) this._handlers.set(event, (handlers = new Set()));
    handlers.add(handler);
    return this;
  }

  /**
   * @param {string} event
   * @param {Function} handler
   * @returns {this}
   */
  once(event, handler) {
    /** @param {...unknown} args */
    const wrapper = (...args) => {
      this.off(event, wrapper);
      handler(...args);
    };
    return this.on(event, wrapper);
  }

  /**
   * @param {string} event
   * @param {Function} [handler] without it, every handler of the event is removed
   * @returns {this}
   */
  off(event, handler) {
    if (!handler) this._handlers.delete(event);
    else this._handlers.get(event)?.delete(handler);
    return this;
  }

  /**
   * @param {string} event
   * @param {...unknown} args
   * @returns {boolean} whether any handler ran
   */
  emit(event, ...args) {
    const handlers = this._handlers.get(event);
    if (!handlers || handlers.size === 0) return false;
    for (const handler of [...handlers]) {
      try {
        handler(...args);
      } catch (err) {
        setTimeout(() => { throw err; }, 0);
      }
    }
    return true;
  }
}
