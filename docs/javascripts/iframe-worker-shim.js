// Search on pages opened from the file system. Browsers refuse to start a Web Worker from a
// file:// page, and the site's search runs in one: on such a page this stand-in runs the
// worker's script in a hidden frame instead, and messages cross between the two windows. It
// does only what the search needs (postMessage both ways, message listeners, terminate).
// Written for chateval; its file name holds "iframe-worker" so that Material's offline plugin
// does not add its own shim, which it would fetch from a server on the internet.
(function () {
  "use strict";
  if (location.protocol !== "file:") return;

  class FrameWorker extends EventTarget {
    constructor(url) {
      super();
      this.onmessage = null;
      this.onerror = null;
      this._waiting = [];
      this._ready = false;
      this._frame = document.createElement("iframe");
      this._frame.style.display = "none";
      (document.body || document.documentElement).appendChild(this._frame);
      const inner = this._frame.contentWindow;
      // The worker answers with the global postMessage: route it to this object's listeners.
      inner.postMessage = (data) => setTimeout(() => this._answer(data), 0);
      const script = inner.document.createElement("script");
      script.src = new URL(url, location.href).href;
      script.onload = () => {
        this._ready = true;
        this._waiting.splice(0).forEach((data) => this.postMessage(data));
      };
      script.onerror = () => {
        const event = new Event("error");
        if (this.onerror) this.onerror(event);
        this.dispatchEvent(event);
      };
      inner.document.head.appendChild(script);
    }

    postMessage(data) {
      if (!this._ready) {
        this._waiting.push(data);
        return;
      }
      const inner = this._frame.contentWindow;
      setTimeout(() => inner.dispatchEvent(new inner.MessageEvent("message", { data })), 0);
    }

    _answer(data) {
      const event = new MessageEvent("message", { data });
      if (this.onmessage) this.onmessage(event);
      this.dispatchEvent(event);
    }

    terminate() {
      this._frame.remove();
    }
  }

  window.Worker = FrameWorker;
})();
