/**
 * lobby.js — keeps the lobby's table list live: polls `GET /lobby.json` every few
 * seconds and redraws the rows with DOM APIs (textContent only), and filters the rows
 * by game. A failed poll says so under the list and keeps trying.
 */

const script = document.getElementById("lobby-script");
const url = script.dataset.url;
const seconds = Number(script.dataset.pollSeconds) || 5;
const body = document.getElementById("lobby-rows");
const status = document.getElementById("lobby-status");
const filters = document.querySelectorAll(".filters [data-game]");
let game = "";
let failing = false;

function cell(label, text, className) {
  const td = document.createElement("td");
  td.dataset.label = label;
  if (className) td.className = className;
  if (text !== undefined) td.textContent = text;
  return td;
}

function row(t) {
  const tr = document.createElement("tr");
  tr.dataset.id = String(t.id);
  tr.dataset.game = t.game;
  const name = cell("Table");
  const link = document.createElement("a");
  link.href = t.url;
  link.textContent = t.name;
  name.append(link);
  if (t.status === "paused") {
    const badge = document.createElement("span");
    badge.className = "badge";
    badge.textContent = "paused";
    name.append(" ", badge);
  }
  const open = cell("");
  const button = document.createElement("a");
  button.className = "button small";
  button.href = t.url;
  button.textContent = t.seated < t.seats ? "Join" : "Watch";
  button.setAttribute("aria-label", `Open ${t.name}`);
  open.append(button);
  tr.append(
    name,
    cell("Game", t.game_label),
    cell("Limit", t.structure_label),
    cell("Stakes", t.stakes_label, "num"),
    cell("Players", `${t.seated}/${t.seats}`, "num"),
    cell("Avg pot", t.average_pot_label, "num"),
    open,
  );
  return tr;
}

function applyFilter() {
  for (const tr of body.querySelectorAll("tr[data-game]")) {
    tr.hidden = Boolean(game) && tr.dataset.game !== game;
  }
}

function draw(tables) {
  if (!tables.length) {
    const tr = document.createElement("tr");
    tr.className = "empty";
    const td = document.createElement("td");
    td.colSpan = 7;
    td.textContent = "No tables are open right now.";
    tr.append(td);
    body.replaceChildren(tr);
    return;
  }
  body.replaceChildren(...tables.map(row));
  applyFilter();
}

async function poll() {
  try {
    const response = await fetch(url, { headers: { Accept: "application/json" }, cache: "no-store" });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const data = await response.json();
    draw(data.tables);
    if (failing) {
      failing = false;
      status.classList.remove("error");
    }
    status.textContent = `Average pot over the last 20 hands. Updated ${new Date().toLocaleTimeString()}.`;
  } catch {
    failing = true;
    status.classList.add("error");
    status.textContent = `The lobby could not be refreshed; retrying in ${seconds} s.`;
  } finally {
    setTimeout(poll, seconds * 1000);
  }
}

for (const button of filters) {
  button.addEventListener("click", () => {
    game = button.dataset.game;
    for (const other of filters) other.setAttribute("aria-pressed", String(other === button));
    applyFilter();
  });
}

setTimeout(poll, seconds * 1000);
