// The status page's live updates: the server sends the worlds' HTML (escaped server-side)
// as a server-sent event; the page swaps it in. EventSource reconnects by itself.
(() => {
  const main = document.getElementById("worlds");
  const live = document.getElementById("live");
  const events = new EventSource(document.body.dataset.events);
  const mark = (on) => {
    live.textContent = on ? live.dataset.on : live.dataset.off;
    live.className = on ? "live on" : "live off";
  };
  events.addEventListener("open", () => mark(true));
  events.addEventListener("error", () => mark(false));
  events.addEventListener("worlds", (event) => {
    main.innerHTML = event.data;
    document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
  });
})();
