/**
 * main.js — the table page's entry point: reads the page config, opens the socket,
 * keeps the model (store.js) and redraws the table (render.js), the action bar
 * (actions.js) and the hand log (log.js) on every snapshot and event, with the sounds
 * (sound.js) and the movement (motion.js) events make, and the chat (chat.js). A snapshot
 * puts back the log of the hand in progress (a page reopened or reconnected mid-hand) and
 * the chat's recent lines. Also owns the buy-in and add-chips dialogs, the auto top-up
 * order, the sound switch, the connection banner and the error messages.
 */

import { ActionBar } from "./actions.js";
import { Chat } from "./chat.js";
import { inputDollars, money, parseDollars } from "./format.js";
import { describe, HandLog } from "./log.js";
import { Motion } from "./motion.js";
import { Clock, TableView } from "./render.js";
import { TableSocket } from "./socket.js";
import { Sounds, soundFor } from "./sound.js";
import { applyEvent, fromSnapshot, mySeat } from "./store.js";

const config = JSON.parse(document.getElementById("table-config").textContent);
const root = document.getElementById("table-app");
const $ = (selector) => root.querySelector(selector);

let model = null;
const log = new HandLog($("#hand-log"));
const errorBox = $("#action-error");
const announcer = $("#turn-announce");
const sounds = new Sounds();
const motion = new Motion(root);

function showError(message) {
  errorBox.textContent = message;
  errorBox.hidden = false;
}

function clearError() {
  errorBox.hidden = true;
  errorBox.textContent = "";
}

const socket = new TableSocket(config.wsPath, {
  snapshot(msg) {
    const first = model === null;
    model = fromSnapshot(msg, model);
    model.username = config.username;
    model.userId = config.userId;
    if (first) log.add({ text: `Joined ${msg.table.name}.`, kind: "info" });
    if (model.hand) log.replaceHand(model.hand.id, model.hand.log.map((e) => describe(e, model)));
    chat.reset(msg.chat || [], msg.muted || []);
    motion.still(draw);
  },
  event(msg) {
    if (!model) return;
    const line = describe(msg, model);
    // The bets slide into the pot from where they are drawn now, before they go.
    if (msg.type === "pots") motion.chipsToPot();
    const notes = applyEvent(model, msg);
    // A hand's own lines are tagged with it (a later snapshot puts them back whole);
    // a reconnect bonus is not in the hand's events, so its line is not.
    log.add(line, msg.type === "turn" ? null : msg.hand);
    notes.forEach((note) => log.add({ text: note, kind: "info" }));
    if (msg.type === "turn" && msg.legal_actions) clearError();
    if (msg.type === "chat") chat.add(msg);
    sounds.play(soundFor(msg, mySeat(model)));
    draw();
    if (msg.type === "won") motion.chipsToSeat(msg.seat);
  },
  status(state, detail) {
    connectionStatus(state, detail);
    if (model) draw();
  },
  error(msg) {
    showError(msg.message || "The table refused that.");
  },
});

const chat = new Chat(root, {
  send: (cmd, fields) => socket.send(cmd, fields),
  showError,
  username: config.username,
  log: $("#hand-log"),
});
const view = new TableView(root, { onSeatClick: openBuyIn, motion });
const clock = new Clock(root, {
  announce: (text) => {
    announcer.textContent = text;
  },
  onHurry: () => sounds.play("hurry"),
});
const actions = new ActionBar(root, {
  send: (cmd, fields) => socket.send(cmd, fields),
  showError,
  clearError,
  config,
});

function draw() {
  if (!model) return;
  const connected = socket.connected;
  view.render(model, { canSit: config.canPlay && connected && model.table.status === "open" });
  actions.render(model, connected);
  chat.setSeated(Boolean(model.you) && connected);
  renderAutoTopUp();
  clock.set(model);
  $("#table-status").textContent = { open: "Open", paused: "Paused", closed: "Closed" }[model.table.status] || model.table.status;
}

function connectionStatus(state, detail) {
  const banner = $("#conn-banner");
  const conn = $("#conn");
  conn.dataset.state = state;
  root.dataset.state = state;
  if (state === "open") {
    conn.textContent = "Connected";
    if (!banner.hidden) {
      banner.hidden = true;
      log.add({ text: "Reconnected: the table is up to date.", kind: "info" });
    }
    return;
  }
  if (state === "connecting") {
    conn.textContent = "Connecting…";
    return;
  }
  if (state === "resyncing") {
    conn.textContent = "Catching up…";
    return;
  }
  if (state === "reconnecting") {
    conn.textContent = "Reconnecting…";
    return;
  }
  if (state === "gone") {
    conn.textContent = "Table closed";
    showBanner("This table no longer exists. Go back to the lobby to find another.");
    return;
  }
  if (state === "signed_out") {
    conn.textContent = "Signed out";
    showBanner(
      "You are signed out of this table: you logged out, your password was changed, or "
        + "your account was changed. ",
    );
    const signIn = document.createElement("a");
    signIn.href = config.loginUrl;
    signIn.textContent = "Sign in again";
    $("#conn-banner").append(signIn);
    return;
  }
  if (state === "limited") {
    conn.textContent = "Too many connections";
    showBanner(
      "Too many table connections from your account or network, or too many reconnects: "
        + `close some table tabs. Trying again in ${detail.seconds} s… `,
      true,
    );
    return;
  }
  conn.textContent = "Offline";
  showBanner(
    `Connection lost. Reconnecting in ${detail.seconds} s (attempt ${detail.attempt})… `
      + "Your seat is kept; if it is your turn, your clock keeps running.",
    true,
  );
}

function showBanner(text, retry = false) {
  const banner = $("#conn-banner");
  banner.replaceChildren(document.createTextNode(text));
  if (retry) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "link";
    button.textContent = "Retry now";
    button.addEventListener("click", () => socket.connect());
    banner.append(button);
  }
  banner.hidden = false;
}

// --- The four-colour deck: the profile's preference, switchable here for this page. ---
$("#four-color").addEventListener("change", (e) => {
  document.body.classList.toggle("four-color", e.target.checked);
});

// --- Sound on or off, remembered in this browser (sound.js). ---
const soundSwitch = $("#sound-on");
soundSwitch.checked = sounds.on;
soundSwitch.addEventListener("change", () => sounds.setOn(soundSwitch.checked));

// --- The auto top-up order: a player setting, sent as a command when changed. ---
const autoTopUp = {
  box: $("#auto-top-up"),
  mode: $("#auto-top-up-mode"),
  below: $("#auto-top-up-below"),
  bigBlinds: $("#auto-top-up-bb"),
};

function renderAutoTopUp() {
  autoTopUp.box.hidden = !model.you;
  const order = model.autoTopUp;
  // Not while the player is choosing.
  if (!order || autoTopUp.box.contains(document.activeElement)) return;
  autoTopUp.mode.value = order.mode;
  autoTopUp.below.hidden = order.mode !== "below";
  if (order.big_blinds) autoTopUp.bigBlinds.value = String(order.big_blinds);
}

async function sendAutoTopUp() {
  const mode = autoTopUp.mode.value;
  autoTopUp.below.hidden = mode !== "below";
  const fields = mode === "below" ? { mode, big_blinds: Number(autoTopUp.bigBlinds.value) } : { mode };
  const answer = await socket.send("auto_top_up", fields);
  if (answer.type === "error") {
    showError(answer.message);
    return;
  }
  model.autoTopUp = { mode, big_blinds: fields.big_blinds ?? null };
}

autoTopUp.mode.addEventListener("change", sendAutoTopUp);
autoTopUp.bigBlinds.addEventListener("change", sendAutoTopUp);

// --- Buy-in dialog. ---
const buyIn = {
  dialog: $("#buyin-dialog"),
  amount: $("#buyin-amount"),
  slider: $("#buyin-slider"),
  error: $("#buyin-error"),
  seat: null,
};

function openBuyIn(seatNumber) {
  if (!config.username) {
    window.location.href = config.loginUrl;
    return;
  }
  if (!model) return;
  const range = model.buyIn || { min: model.table.stake.buy_in_min, max: model.table.stake.buy_in_max };
  const stake = { buy_in_min: range.min, buy_in_max: range.max };
  buyIn.seat = seatNumber;
  $("#buyin-seat").textContent = String(seatNumber);
  const rathole = range.min > model.table.stake.buy_in_min
    ? " You left this stake level a short while ago: bring back at least what you left with."
    : "";
  $("#buyin-range").textContent = `Buy in from ${money(stake.buy_in_min)} to ${money(stake.buy_in_max)}.${rathole}`;
  const balance = config.balance;
  $("#buyin-balance").textContent = balance === null ? "" : `Your balance: ${money(balance)}.`;
  const start = balance === null ? stake.buy_in_max : Math.max(stake.buy_in_min, Math.min(stake.buy_in_max, balance));
  buyIn.slider.min = String(stake.buy_in_min);
  buyIn.slider.max = String(stake.buy_in_max);
  buyIn.slider.step = String(model.table.stake.big_blind || 1);
  buyIn.slider.value = String(start);
  buyIn.amount.value = inputDollars(start);
  buyIn.amount.min = inputDollars(stake.buy_in_min);
  buyIn.amount.max = inputDollars(stake.buy_in_max);
  buyIn.error.hidden = true;
  buyIn.dialog.showModal();
  buyIn.amount.focus();
  buyIn.amount.select();
}

buyIn.slider.addEventListener("input", () => {
  buyIn.amount.value = inputDollars(Number(buyIn.slider.value));
});
buyIn.amount.addEventListener("input", () => {
  const cents = parseDollars(buyIn.amount.value);
  if (cents !== null) buyIn.slider.value = String(cents);
});
$("#buyin-cancel").addEventListener("click", () => buyIn.dialog.close());
$("#buyin-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const cents = parseDollars(buyIn.amount.value);
  if (cents === null || cents === 0) {
    dialogError(buyIn.error, "Enter the buy-in in dollars, like 100 or 100.50.");
    return;
  }
  const submit = $("#buyin-submit");
  submit.disabled = true;
  const answer = await socket.send("sit", {
    seat: buyIn.seat,
    buy_in: cents,
    post_big_blind: $("#buyin-post").checked,
  });
  submit.disabled = false;
  if (answer.type === "error") {
    dialogError(buyIn.error, answer.message);
    return;
  }
  if (config.balance !== null) config.balance -= cents;
  buyIn.dialog.close();
});

function dialogError(box, message) {
  box.textContent = message;
  box.hidden = false;
}

// --- Add chips (top up between hands). ---
const topUp = { dialog: $("#topup-dialog"), amount: $("#topup-amount"), error: $("#topup-error") };
$("#btn-topup").addEventListener("click", () => {
  if (!model || !model.you) return;
  const room = Math.max(0, model.table.stake.buy_in_max - model.you.stack);
  $("#topup-range").textContent = `You can add up to ${money(room)} (the maximum buy-in is ${money(model.table.stake.buy_in_max)}).`;
  topUp.amount.value = inputDollars(room);
  topUp.error.hidden = true;
  topUp.dialog.showModal();
});
$("#topup-cancel").addEventListener("click", () => topUp.dialog.close());
$("#topup-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const cents = parseDollars(topUp.amount.value);
  if (cents === null || cents === 0) {
    dialogError(topUp.error, "Enter an amount in dollars, like 50 or 50.25.");
    return;
  }
  const answer = await socket.send("top_up", { amount: cents });
  if (answer.type === "error") {
    dialogError(topUp.error, answer.message);
    return;
  }
  topUp.dialog.close();
});

// Exposed for the browser tests and the console: `tableClient.socket.drop()`.
window.tableClient = { socket, sounds, motion, get model() { return model; } };

socket.connect();
