// The trace page in headless Chromium, in a window of 1,024 x 768 pixels
// (a projector's), driven through the DevTools protocol on a pipe: one
// browser for every visit, no network, no npm package.  Run by
// test/docs/trace_page.sh:
//
//   node test/docs/trace_page.js OUT < VISITS
//
// Each line of VISITS is "NAME PAGE HASH [legend] [planted=FAULT]": open
// the file PAGE at #HASH (loaded afresh when the visit before was of another
// file, else by changing its address's #HASH, as a reader may); with
// "legend", press the page's legend button, and after measuring, Escape.  Each visit leaves
// OUT/NAME.html (the DOM the page's script drew) and OUT/NAME.png (what
// the window shows), and prints a line: NAME, where the step's parts end,
// in pixels from the window's top, the smallest text, the legend's box and
// the heap copies' boxes (left,top..right,bottom).
//
// What must hold at every visit, in a page about 680 pixels tall at most
// (a 1,024 x 768 screen less the browser's bars; Chromium's headless
// window gives 625): the page does not scroll either way, and the step's
// parts (the whole run stack, its enlarged top, the arrow, the heap
// copies, the step's line, what the program printed, the trees and their
// captions) end inside it, not hidden under anything; no text is drawn
// under 12 pixels, and no two texts overlap anywhere.  With the legend
// open: the legend lies inside the window (scrolling inside itself if it
// must) beside the step, covering no part of it, and the step is all
// there; Escape closes it on the same step.
//
// A visit with planted=FAULT is of a copy of the page given a bug: it
// must report a fault that says FAULT, and its faults are not the run's.
// Prints each fault and exits 1 if any.
"use strict";
const { spawn } = require("child_process");
const fs = require("fs"), os = require("os"), path = require("path");

const out = process.argv[2];
const HEIGHT = 680; /* the tallest page a 1,024 x 768 projector leaves */
const chromium = process.env.CHROMIUM || "chromium";
const profile = fs.mkdtempSync(path.join(os.tmpdir(), "trace-page-"));
const browser = spawn(chromium, ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
  "--user-data-dir=" + profile, "--window-size=1024,768", "--remote-debugging-pipe", "about:blank"],
  { stdio: ["ignore", "ignore", "ignore", "pipe", "pipe"] });

// The protocol on the pipe: JSON messages, each ended by a NUL byte,
// written to the browser's fd 3 and read from its fd 4.
let lastId = 0, received = "";
const waiting = new Map();
browser.stdio[4].on("data", (data) => {
  received += data.toString();
  for (let end; (end = received.indexOf("\0")) >= 0; received = received.slice(end + 1)) {
    const message = JSON.parse(received.slice(0, end));
    if (waiting.has(message.id)) {
      waiting.get(message.id)(message);
      waiting.delete(message.id);
    }
  }
});
function send(method, params, sessionId) {
  return new Promise((resolve, reject) => {
    const id = ++lastId;
    waiting.set(id, (m) => (m.error ? reject(new Error(method + ": " + m.error.message)) : resolve(m.result)));
    browser.stdio[3].write(JSON.stringify({ id, method, params: params || {}, sessionId }) + "\0");
  });
}

// Runs in the page: where the step's parts end.  A part's extent is the
// union of its element's box and its visible descendants' (the drawings
// place labels outside their boxes), clipped where it scrolls.
function measure() {
  function extent(e) {
    if (!e || getComputedStyle(e).display === "none") return null;
    const clips = getComputedStyle(e).overflowY !== "visible";
    const r = { top: Infinity, bottom: -Infinity, left: Infinity, right: -Infinity };
    (clips ? [e] : [e].concat(Array.from(e.querySelectorAll("*")))).forEach((d) => {
      const b = d.getBoundingClientRect();
      if ((b.width === 0 && b.height === 0) || getComputedStyle(d).visibility === "hidden") return;
      r.top = Math.min(r.top, b.top); r.bottom = Math.max(r.bottom, b.bottom);
      r.left = Math.min(r.left, b.left); r.right = Math.max(r.right, b.right);
    });
    return r.top === Infinity ? null :
      { top: Math.floor(r.top), bottom: Math.ceil(r.bottom), left: Math.floor(r.left), right: Math.ceil(r.right) };
  }
  // Whether what is drawn at a point inside e (its middle, or near its
  // left edge for a wide one) is e or inside it: not under the legend.
  function shown(e) {
    const b = e.getBoundingClientRect(), x = b.left + Math.min(b.width / 2, 12), y = b.top + b.height / 2;
    const at = document.elementFromPoint(x, y);
    return at !== null && (at === e || e.contains(at));
  }
  const byId = (id) => document.getElementById(id);
  const parts = {};
  ["whole", "stack", "arrow", "heaps", "title", "said-box", "trees", "legend"].forEach((id) => {
    const e = extent(byId(id));
    if (e) parts[id] = e;
  });
  const hidden = [];
  const mustShow = [["the step's line", byId("title")], ["what the program printed", byId("said")],
    ["the run stack", document.querySelector("#stack .box")]]
    .concat(Array.from(document.querySelectorAll("#stack .label"), (e) => ["the run stack's label " + e.title, e]))
    .concat(Array.from(document.querySelectorAll("#heaps .box"), (e) => ["a heap copy", e]))
    .concat(Array.from(document.querySelectorAll("#trees .where"), (e) => ["a tree's caption", e]));
  const legendOpen = getComputedStyle(byId("legend")).display !== "none";
  mustShow.forEach(([what, e]) => { if (e && !shown(e)) hidden.push(what); });
  if (legendOpen && !shown(byId("legend"))) hidden.push("the legend");
  // Every text on the page, each line of it a box (clipped where it
  // scrolls, as the legend's), and the size it is drawn at.
  const texts = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let t; (t = walker.nextNode());) {
    if (t.data.trim() === "") continue;
    const range = document.createRange();
    range.selectNodeContents(t);
    let clip = null;
    for (let a = t.parentElement; a; a = a.parentElement)
      if (getComputedStyle(a).overflowY !== "visible") { clip = a.getBoundingClientRect(); break; }
    const size = parseFloat(getComputedStyle(t.parentElement).fontSize);
    Array.from(range.getClientRects()).forEach((r) => {
      const b = clip ? { left: Math.max(r.left, clip.left), right: Math.min(r.right, clip.right),
        top: Math.max(r.top, clip.top), bottom: Math.min(r.bottom, clip.bottom) } : r;
      if (b.right - b.left > 0.5 && b.bottom - b.top > 0.5) texts.push({ node: t, text: t.data.trim(), size, box: b });
    });
  }
  // No two texts overlap (a label measured narrower than it is drawn, a
  // heading run into the next, the legend over a caption), by more than
  // a pixel either way.
  const overlaps = [];
  texts.forEach((a, i) => texts.slice(i + 1).forEach((b) => {
    const p = a.box, q = b.box;
    if (a.node !== b.node && p.left < q.right - 1 && q.left < p.right - 1 && p.top < q.bottom - 1 && q.top < p.bottom - 1)
      overlaps.push("'" + a.text.slice(0, 30) + "' and '" + b.text.slice(0, 30) + "'");
  }));
  const smallest = texts.reduce((m, t) => (m === null || t.size < m.size ? t : m), null);
  const small = texts.filter((t) => t.size < 12).map((t) => t.size + " px: '" + t.text.slice(0, 30) + "'");
  const legend = byId("legend");
  const box = (e) => { const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom].map(Math.round); };
  return {
    width: innerWidth, height: innerHeight,
    scrollWidth: document.scrollingElement.scrollWidth, scrollHeight: document.scrollingElement.scrollHeight,
    walk: (/walk=(\d+)/.exec(location.hash) || [])[1], step: byId("step").textContent,
    parts, hidden, overlaps, small, legendOpen,
    smallest: smallest ? smallest.size + " px ('" + smallest.text.slice(0, 24) + "')" : "none",
    legendBox: legendOpen ? box(legend) : null,
    heapBoxes: Array.from(document.querySelectorAll("#heaps .box"), box),
    legendScrolls: legend.scrollHeight <= legend.clientHeight + 1 || /auto|scroll/.test(getComputedStyle(legend).overflowY),
  };
}

const faults = [];
function check(name, m, opened) {
  const fault = (what) => faults.push(name + ": " + what);
  if (m.width !== 1024 || m.height < 560 || m.height > 768)
    return fault("the window is " + m.width + " x " + m.height + " pixels, not a page of 1,024 x 768");
  const tallest = Math.min(m.height, HEIGHT);
  if (m.scrollWidth > m.width) fault("the page scrolls sideways: " + m.scrollWidth + " pixels wide");
  if (m.scrollHeight > m.height) fault("the page scrolls: " + m.scrollHeight + " pixels tall in a window of " + m.height);
  Object.keys(m.parts).forEach((part) => {
    const p = m.parts[part];
    if (part === "legend") return;
    if (p.bottom > tallest) fault(part + " ends " + p.bottom + " pixels down, below the page's " + tallest);
    if (p.right > m.width || p.left < 0) fault(part + " reaches past the window's sides (" + p.left + " .. " + p.right + ")");
  });
  m.hidden.forEach((what) => fault(what + " is hidden under something"));
  m.overlaps.forEach((what) => fault("texts overlap: " + what));
  m.small.forEach((what) => fault("a text under 12 pixels: " + what));
  if (opened) {
    const l = m.parts.legend;
    if (!m.legendOpen || !l) return fault("the legend button shows no legend");
    if (l.top < 0 || l.bottom > tallest || l.left < 0 || l.right > m.width)
      fault("the legend (" + l.left + "," + l.top + " .. " + l.right + "," + l.bottom + ") is not inside the page");
    if (!m.legendScrolls) fault("the legend is cut off, and does not scroll");
    // beside the step: over no part of it
    Object.keys(m.parts).forEach((part) => {
      const p = m.parts[part];
      if (part !== "legend" && p.left < l.right && l.left < p.right && p.top < l.bottom && l.top < p.bottom)
        fault("the legend (" + l.left + "," + l.top + " .. " + l.right + "," + l.bottom + ") lies over " + part +
          " (" + p.left + "," + p.top + " .. " + p.right + "," + p.bottom + ")");
    });
  } else if (m.legendOpen) {
    fault("the legend is open, unasked");
  }
}

async function main() {
  const targets = await send("Target.getTargets");
  const target = targets.targetInfos.find((t) => t.type === "page");
  const { sessionId } = await send("Target.attachToTarget", { targetId: target.targetId, flatten: true });
  const evaluate = async (expression) => {
    const r = await send("Runtime.evaluate", { expression, returnByValue: true }, sessionId);
    if (r.exceptionDetails)
      throw new Error(expression.slice(0, 60) + ": " + (r.exceptionDetails.exception || {}).description);
    return r.result.value;
  };
  const visits = fs.readFileSync(0, "utf8").split("\n").filter((l) => l.trim() !== "");
  let n = 0, last = "";
  for (const visit of visits) {
    const [name, page, hash, ...actions] = visit.split(/\s+/);
    const action = actions.includes("legend") ? "legend" : "";
    const planted = (actions.find((a) => a.startsWith("planted=")) || "").slice(8).replace(/_/g, " ");
    const before = faults.length;
    if (page === last) {
      // the page's own listener draws the step before this one hears the change
      await send("Runtime.evaluate", { expression: "(function (hash) { return location.hash === hash ? 0 : new Promise(" +
        "function (r) { addEventListener('hashchange', r, { once: true }); location.hash = hash; }); })(" +
        JSON.stringify("#" + hash) + ")", awaitPromise: true }, sessionId);
    } else {
      // a query that differs each time: a fresh load, not a change of hash
      await send("Page.navigate", { url: "file://" + path.resolve(page) + "?" + ++n + "#" + hash }, sessionId);
      for (let i = 0; (await evaluate("document.readyState + ':' + location.search")) !== "complete:?" + n; i++) {
        if (i === 400) throw new Error(name + ": the page did not load");
        await new Promise((r) => setTimeout(r, 25));
      }
      last = page;
    }
    const boxes = await evaluate("document.querySelectorAll('#stack .box').length");
    if (boxes === 0) faults.push(name + ": the page drew no run stack (a script error?)");
    if (action === "legend") await evaluate("document.getElementById('legend-button').click()");
    const m = await evaluate("(" + measure.toString() + ")()");
    check(name, m, action === "legend");
    fs.writeFileSync(path.join(out, name + ".html"), await evaluate("document.documentElement.outerHTML"));
    const shot = await send("Page.captureScreenshot", { format: "png", optimizeForSpeed: true }, sessionId);
    fs.writeFileSync(path.join(out, name + ".png"), Buffer.from(shot.data, "base64"));
    if (action === "legend") {
      const after = await evaluate("document.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape' }));" +
        "getComputedStyle(document.getElementById('legend')).display + ' ' + document.getElementById('step').textContent");
      if (after !== "none " + m.step) faults.push(name + ": Escape leaves the legend and the step as '" + after + "'");
    }
    if (planted) {
      // the bug planted in this copy must be caught; what it causes is not the run's fault
      const caught = faults.splice(before).filter((f) => f.includes(planted));
      if (caught.length === 0) faults.push(name + ": the planted fault, " + planted + ", is not reported");
      console.log(name + " planted, caught: " + (caught[0] || "nothing"));
      continue;
    }
    const p = m.parts, caption = Math.max(...["title", "said-box", "trees"].map((k) => (p[k] ? p[k].bottom : 0)));
    const lowest = Math.max(...Object.keys(p).filter((k) => k !== "legend").map((k) => p[k].bottom));
    console.log(name + " window " + m.width + "x" + m.height + ", walkthrough " + m.walk + " step " + m.step +
      ": run stack " + p.stack.bottom + ", heap copies " + p.heaps.bottom + ", caption " + caption +
      ", whole run stack " + p.whole.bottom + (p.legend ? ", legend " + p.legend.top + ".." + p.legend.bottom : "") +
      "; lowest " + lowest + "; smallest text " + m.smallest + "; legend box " + (m.legendBox ? m.legendBox.join(",") : "none") +
      "; heap copy boxes " + (m.heapBoxes.map((b) => b.join(",")).join(" ") || "none"));
  }
  await send("Browser.close");
}

const timer = setTimeout(() => { console.error("trace page: Chromium did not answer in 300 s"); browser.kill(); }, 300000);
main().then(() => {
  clearTimeout(timer);
  faults.forEach((f) => console.error("trace page: " + f));
  if (faults.length > 0) process.exitCode = 1;
}, (e) => {
  console.error("trace page: " + e.message);
  clearTimeout(timer);
  browser.kill();
  process.exitCode = 1;
});
browser.on("exit", () => fs.rmSync(profile, { recursive: true, force: true, maxRetries: 5 }));
