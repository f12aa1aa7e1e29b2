/**
 * sound.js — the table's sounds, made with the Web Audio API (no sound files): your turn,
 * time running out, a check, chips, a deal, a win.
 *
 * The mute switch is remembered in localStorage (`poker-room.sound`: "on" or "off"; on
 * when never set). Browsers start an AudioContext only after a click or key press on the
 * page, so the context is made (or resumed) on the first gesture; sounds asked for before
 * that are skipped. `played` keeps the names of the sounds played (for the browser tests
 * and the console): nothing is added while muted.
 *
 * The room's Content-Security-Policy needs nothing for this: oscillators and generated
 * noise load no media and run no worklet script.
 */

const STORAGE_KEY = "poker-room.sound";
const REPEAT_MS = 150;

// Each sound: a list of notes {f: Hz (0 = noise), at: start s, d: length s, g: gain, type}.
const SOUNDS = {
  turn: [
    { f: 660, at: 0, d: 0.12, g: 0.25, type: "sine" },
    { f: 880, at: 0.13, d: 0.18, g: 0.25, type: "sine" },
  ],
  hurry: [
    { f: 990, at: 0, d: 0.07, g: 0.22, type: "square" },
    { f: 990, at: 0.14, d: 0.07, g: 0.22, type: "square" },
    { f: 990, at: 0.28, d: 0.07, g: 0.22, type: "square" },
  ],
  check: [
    { f: 140, at: 0, d: 0.06, g: 0.5, type: "triangle" },
    { f: 120, at: 0.09, d: 0.06, g: 0.4, type: "triangle" },
  ],
  chips: [
    { f: 0, at: 0, d: 0.035, g: 0.3, hp: 3000 },
    { f: 0, at: 0.05, d: 0.035, g: 0.25, hp: 3500 },
    { f: 0, at: 0.1, d: 0.03, g: 0.2, hp: 4000 },
  ],
  deal: [{ f: 0, at: 0, d: 0.09, g: 0.18, hp: 1500 }],
  win: [
    { f: 523, at: 0, d: 0.14, g: 0.2, type: "triangle" },
    { f: 659, at: 0.12, d: 0.14, g: 0.2, type: "triangle" },
    { f: 784, at: 0.24, d: 0.14, g: 0.2, type: "triangle" },
    { f: 1047, at: 0.36, d: 0.3, g: 0.2, type: "triangle" },
  ],
};

export class Sounds {
  constructor() {
    this.on = readSetting();
    this.context = null;
    this.played = [];
    this.last = {};
    const unlock = () => this.unlock();
    document.addEventListener("pointerdown", unlock, { capture: true });
    document.addEventListener("keydown", unlock, { capture: true });
  }

  setOn(on) {
    this.on = on;
    try {
      localStorage.setItem(STORAGE_KEY, on ? "on" : "off");
    } catch {
      // Private windows may refuse storage: the switch still works for this page.
    }
    if (on) this.unlock();
  }

  unlock() {
    if (!this.on) return;
    const Context = window.AudioContext || window.webkitAudioContext;
    if (!Context) return;
    if (!this.context) this.context = new Context();
    if (this.context.state === "suspended") this.context.resume().catch(() => {});
  }

  /** Play one of SOUNDS by name (a no-op while muted). */
  play(name) {
    const notes = SOUNDS[name];
    if (!this.on || !notes) return;
    // A burst of events (blinds, several pots won) makes one sound, not a pile of them.
    const now = performance.now();
    if (now - (this.last[name] ?? -Infinity) < REPEAT_MS) return;
    this.last[name] = now;
    this.played.push(name);
    const ctx = this.context;
    if (!ctx || ctx.state !== "running") return;
    const start = ctx.currentTime + 0.01;
    for (const note of notes) this.note(ctx, start, note);
  }

  note(ctx, start, note) {
    const gain = ctx.createGain();
    const t = start + note.at;
    gain.gain.setValueAtTime(0.0001, t);
    gain.gain.exponentialRampToValueAtTime(note.g, t + 0.005);
    gain.gain.exponentialRampToValueAtTime(0.0001, t + note.d);
    gain.connect(ctx.destination);
    let source;
    if (note.f) {
      source = ctx.createOscillator();
      source.type = note.type;
      source.frequency.setValueAtTime(note.f, t);
      source.connect(gain);
    } else {
      source = ctx.createBufferSource();
      source.buffer = noise(ctx, note.d);
      const filter = ctx.createBiquadFilter();
      filter.type = "highpass";
      filter.frequency.setValueAtTime(note.hp, t);
      source.connect(filter);
      filter.connect(gain);
    }
    source.start(t);
    source.stop(t + note.d + 0.02);
  }
}

function readSetting() {
  try {
    return localStorage.getItem(STORAGE_KEY) !== "off";
  } catch {
    return true;
  }
}

function noise(ctx, seconds) {
  const length = Math.max(1, Math.floor(ctx.sampleRate * seconds));
  const buffer = ctx.createBuffer(1, length, ctx.sampleRate);
  const data = buffer.getChannelData(0);
  for (let i = 0; i < length; i += 1) data[i] = Math.random() * 2 - 1;
  return buffer;
}

/** The sound an event makes at this table, if any (`mine`: the viewer's seat or null). */
export function soundFor(msg, mine) {
  switch (msg.type) {
    case "turn":
      return msg.seat === mine && msg.legal_actions ? "turn" : null;
    case "acted":
      if (msg.action === "check") return "check";
      return msg.action === "fold" ? null : "chips";
    case "posted":
      return "chips";
    case "hand_started":
    case "dealt_board":
      return "deal";
    case "won":
      return "win";
    default:
      return null;
  }
}
