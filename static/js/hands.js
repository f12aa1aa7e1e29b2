/**
 * hands.js — the hand-history page: lists the player's finished hands from
 * `GET /api/hands/` and replays one from `GET /api/hands/<id>/` street by street (the
 * board so far, both boards of a hand run twice, and the actions of each street,
 * written by log.js). DOM APIs only; an
 * API error shows its `detail`.
 */

import { cardElement, cardsText, GAME_HOLE_CARDS, money, STREET_NAMES } from "./table/format.js";
import { describe } from "./table/log.js";

const app = document.getElementById("hands-app");
const list = document.getElementById("hands-list");
const status = document.getElementById("hands-status");
const errorBox = document.getElementById("replay-error");
const STREETS = ["preflop", "flop", "turn", "river", "showdown"];
let hand = null;
let step = 0;
let steps = [];

async function getJSON(url) {
  const response = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) {
    const detail = body && body.detail ? body.detail : `The server answered ${response.status}.`;
    throw new Error(detail);
  }
  return body;
}

function text(tag, value, className) {
  const node = document.createElement(tag);
  node.textContent = value;
  if (className) node.className = className;
  return node;
}

async function loadList() {
  try {
    const page = await getJSON(app.dataset.listUrl);
    const hands = page.results || [];
    status.textContent = hands.length ? `${hands.length} most recent hands.` : "No finished hands yet: play a hand and it shows here.";
    list.replaceChildren(...hands.map((h) => {
      const li = document.createElement("li");
      const button = document.createElement("button");
      button.type = "button";
      button.dataset.id = String(h.id);
      button.textContent = `#${h.number} · ${h.table.name} · pot ${money(h.pot)}`;
      button.append(text("span", ` ${new Date(h.ended_at || h.started_at).toLocaleString()}`, "muted small"));
      button.addEventListener("click", () => open(h.id, button));
      li.append(button);
      return li;
    }));
    // A link such as /hands/#hand-42 (from the profile) opens that hand at once.
    const wanted = /^#hand-(\d+)$/.exec(window.location.hash);
    const button = wanted && list.querySelector(`button[data-id="${wanted[1]}"]`);
    if (button) open(Number(wanted[1]), button);
  } catch (err) {
    status.textContent = `Your hands could not be loaded: ${err.message}`;
    status.classList.add("error");
  }
}

/**
 * Split the events into streets: everything before a `dealt_board` belongs to the street
 * before. Each street keeps the boards so far: one, or two once a board run twice has
 * its second run (which starts from the cards both runs share, as the events say).
 */
function splitStreets(events) {
  const out = [{ street: "preflop", run: 1, boards: [[]], events: [] }];
  let board = [];
  let second = null;
  for (const row of events) {
    const e = row.data;
    if (e.type === "run_twice_decided" && e.runs === 2) second = [...board];
    if (e.type === "dealt_board") {
      if (e.run === 2 && second) second = [...second, ...e.cards];
      else board = [...board, ...e.cards];
      out.push({ street: e.street, run: e.run || 1, boards: boardsOf(board, second, e.run), events: [] });
      continue;
    }
    if (["shown", "mucked", "won", "rake", "hand_ended", "chopped"].includes(e.type) && out.at(-1).street !== "showdown") {
      out.push({ street: "showdown", run: 1, boards: boardsOf(board, second, 2), events: [] });
    }
    out.at(-1).events.push(e);
  }
  return out;
}

/** The boards a street shows: the first run's, and the second's once it is dealt. */
function boardsOf(board, second, run) {
  return second && run === 2 ? [board, second] : [board];
}

function streetName(part) {
  const name = STREET_NAMES[part.street] || "Showdown";
  return part.run === 2 ? `Second board, ${name}` : name;
}

async function open(id, button) {
  errorBox.hidden = true;
  for (const b of list.querySelectorAll("button")) b.removeAttribute("aria-current");
  button.setAttribute("aria-current", "true");
  try {
    hand = await getJSON(`${app.dataset.detailUrl}${id}/`);
  } catch (err) {
    errorBox.textContent = `This hand could not be loaded: ${err.message}`;
    errorBox.hidden = false;
    return;
  }
  steps = splitStreets(hand.events);
  step = 0;
  document.getElementById("replay-title").textContent = `Hand #${hand.number} at ${hand.table.name}`;
  document.getElementById("replay-sub").textContent = `${hand.stake_level.name} · button seat ${hand.button} · rake ${money(hand.rake)}`;
  document.getElementById("replay-body").hidden = false;
  draw(false);
}

function model() {
  return { hand: { players: hand.seats.map((s) => ({ seat: s.seat, player: s.player })) }, seats: [] };
}

function line(e) {
  if (e.type === "hole_cards") {
    const seat = hand.seats.find((s) => s.seat === e.seat);
    return `Dealt to ${seat ? seat.player : `seat ${e.seat}`}: ${cardsText(e.cards)}`;
  }
  const described = describe(e, model());
  return described && (typeof described === "string" ? described : described.text);
}

function draw(all) {
  const shown = all ? steps : steps.slice(0, step + 1);
  const current = shown.at(-1);
  document.getElementById("replay-street").textContent = all ? "The whole hand" : streetName(current);
  const [first, second] = current.boards;
  document.getElementById("replay-board").replaceChildren(...first.map((c) => cardElement(c)));
  const secondBox = document.getElementById("replay-board-2");
  secondBox.hidden = !second;
  secondBox.replaceChildren(...(second || []).map((c) => cardElement(c)));
  const body = document.querySelector("#replay-seats tbody");
  body.replaceChildren(...hand.seats.map((s) => {
    const tr = document.createElement("tr");
    const cards = document.createElement("td");
    // Cards not shown (mucked, or folded) are as many backs as were dealt: four at Omaha.
    const hidden = Array(GAME_HOLE_CARDS[hand.game] || 2).fill(null);
    (s.hole_cards || hidden).forEach((c) => cards.append(cardElement(c, { small: true })));
    const end = text("td", money(s.final_stack), "num");
    tr.append(text("td", String(s.seat)), text("td", s.player), cards, text("td", money(s.starting_stack), "num"), end);
    return tr;
  }));
  const box = document.getElementById("replay-streets");
  box.replaceChildren(...shown.map((part) => {
    const section = document.createElement("section");
    section.className = "replay-street";
    section.append(text("h3", streetName(part)));
    const ol = document.createElement("ol");
    part.events.map(line).filter(Boolean).forEach((l) => ol.append(text("li", l)));
    section.append(ol);
    return section;
  }));
  document.getElementById("replay-prev").disabled = all ? false : step === 0;
  document.getElementById("replay-next").disabled = !all && step >= steps.length - 1;
}

document.getElementById("replay-prev").addEventListener("click", () => {
  step = Math.max(0, step - 1);
  draw(false);
});
document.getElementById("replay-next").addEventListener("click", () => {
  step = Math.min(steps.length - 1, step + 1);
  draw(false);
});
document.getElementById("replay-all").addEventListener("click", () => {
  step = steps.length - 1;
  draw(true);
});

loadList();
