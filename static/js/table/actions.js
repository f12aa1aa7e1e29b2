/**
 * actions.js — what the viewer can do: the three main buttons on their turn (fold,
 * check/call, bet/raise) with the legal amounts, the bet slider and amount box bounded
 * to [min_to, max_to] with min / half pot / pot / all-in shortcuts (pot- and no-limit),
 * the advance ("in turn") boxes while waiting, the seat controls (sit out, back, add
 * chips, leave), the "Straddle / Overblind next hand" toggles (shown only when the
 * server's `blind_options` say the option is open to the viewer, or they asked for it)
 * and the keyboard shortcuts F, C and R.
 *
 * Fold when checking is free (the turn's `legal_actions` say `can_check` and not
 * `can_fold`) is never sent: it asks "check instead?" with a Check button. Coming back
 * from sitting out offers both ways back: wait for the big blind, or post one now (and a
 * player waiting for the big blind may post one now too). On the viewer's turn the root
 * gets `data-my-turn`, which keeps the action bar on screen on a phone (room.css).
 *
 * Every command goes through `send(cmd, fields)` (socket.js) and its answer: an error
 * shows the server's reason in the action bar and the buttons come back.
 */

import { inputDollars, money, parseDollars } from "./format.js";
import { askedToRunTwice, myPlayer, mySeat, toMatch } from "./store.js";

const POT_STRUCTURES = new Set(["PL", "NL"]);

export function clamp(value, low, high) {
  return Math.min(high, Math.max(low, value));
}

export class ActionBar {
  constructor(root, { send, showError, clearError, config }) {
    this.root = root;
    this.send = send;
    this.showError = showError;
    this.clearError = clearError;
    this.config = config;
    this.now = root.querySelector("#act-now");
    this.advanceBox = root.querySelector("#act-advance");
    this.fold = root.querySelector("#btn-fold");
    this.call = root.querySelector("#btn-call");
    this.raise = root.querySelector("#btn-raise");
    this.sizing = root.querySelector("#sizing");
    this.slider = root.querySelector("#bet-slider");
    this.amount = root.querySelector("#bet-amount");
    this.hint = root.querySelector("#seat-hint");
    this.sitOut = root.querySelector("#btn-sitout");
    this.sitIn = root.querySelector("#btn-sitin");
    this.sitInPost = root.querySelector("#btn-sitin-post");
    this.postNow = root.querySelector("#btn-post-bb");
    this.foldCheck = root.querySelector("#fold-check");
    this.foldCheckButton = root.querySelector("#btn-fold-check");
    this.topUp = root.querySelector("#btn-topup");
    this.leave = root.querySelector("#btn-leave");
    this.blindToggles = [...root.querySelectorAll("[data-blind-option]")];
    this.runTwice = root.querySelector("#run-twice");
    this.runTwiceText = root.querySelector("#run-twice-text");
    this.runTwiceYes = root.querySelector("#btn-run-twice-yes");
    this.runTwiceNo = root.querySelector("#btn-run-twice-no");
    this.raiseTo = null;
    this.model = null;
    this.connected = false;
    this.wire();
  }

  wire() {
    this.fold.addEventListener("click", () => {
      const legal = this.legal();
      if (legal && !legal.can_fold && legal.can_check) {
        this.foldCheck.hidden = false;
        this.foldCheckButton.focus();
        return;
      }
      this.act("fold");
    });
    this.foldCheckButton.addEventListener("click", () => this.act("check"));
    this.root.querySelector("#btn-fold-cancel").addEventListener("click", () => {
      this.foldCheck.hidden = true;
      this.fold.focus();
    });
    this.call.addEventListener("click", () => {
      const legal = this.legal();
      if (legal) this.act(legal.can_check ? "check" : "call");
    });
    this.raise.addEventListener("click", () => this.act("bet_raise", this.raiseTo));
    this.slider.addEventListener("input", () => this.setRaise(Number(this.slider.value), { fromSlider: true }));
    this.amount.addEventListener("change", () => this.amountTyped());
    this.amount.addEventListener("keydown", (e) => {
      const legal = this.legal();
      if (!legal || !this.model.hand) return;
      const step = this.model.hand.limits.big_blind || 1;
      if (e.key === "ArrowUp" || e.key === "ArrowDown") {
        e.preventDefault();
        this.setRaise(this.raiseTo + (e.key === "ArrowUp" ? step : -step));
      } else if (e.key === "Enter") {
        e.preventDefault();
        this.amountTyped();
        this.raise.click();
      }
    });
    for (const button of this.root.querySelectorAll("[data-preset]")) {
      button.addEventListener("click", () => {
        // The server sends the shortcuts' amounts with the turn (tables/engine/presets.py).
        const presets = this.model && this.model.hand && this.model.hand.presets;
        if (presets) this.setRaise(presets[button.dataset.preset]);
      });
    }
    for (const box of this.advanceBox.querySelectorAll("[data-advance]")) {
      box.addEventListener("change", () => this.advanceChanged(box));
    }
    for (const button of this.blindToggles) {
      button.addEventListener("click", () => {
        const option = this.blindOption(button.dataset.blindOption);
        if (option) this.command(button.dataset.blindOption, { on: !option.asked });
      });
    }
    this.runTwiceYes.addEventListener("click", () => this.answerRunTwice(true));
    this.runTwiceNo.addEventListener("click", () => this.answerRunTwice(false));
    this.sitOut.addEventListener("click", () => this.command("sit_out"));
    this.sitIn.addEventListener("click", () => this.command("sit_in", { post_big_blind: false }));
    this.sitInPost.addEventListener("click", () => this.command("sit_in", { post_big_blind: true }));
    this.postNow.addEventListener("click", () => this.command("sit_in", { post_big_blind: true }));
    this.leave.addEventListener("click", () => {
      const inHand = this.model && myPlayer(this.model);
      if (inHand && !window.confirm("You are in a hand: leaving folds it when the action reaches you. Leave the table?")) return;
      this.command("leave");
    });
    document.addEventListener("keydown", (e) => this.shortcut(e));
  }

  /** The server's word on one option for the viewer: {open, asked, amount, reason}. */
  blindOption(kind) {
    const options = this.model && this.model.you && this.model.you.blind_options;
    return options ? options[kind] || null : null;
  }

  renderBlindToggles() {
    for (const button of this.blindToggles) {
      const kind = button.dataset.blindOption;
      const option = this.blindOption(kind);
      button.hidden = !option || !(option.open || option.asked);
      if (button.hidden) continue;
      const label = kind === "straddle" ? "Straddle" : "Overblind";
      button.textContent = `${label} next hand (${money(option.amount)})`;
      button.setAttribute("aria-pressed", option.asked ? "true" : "false");
      // Asked for, but no longer open (the seats moved): the deal will say it was not posted.
      button.title = option.asked && !option.open ? option.reason || "" : "";
      button.disabled = !this.connected;
    }
  }

  legal() {
    const hand = this.model && this.model.hand;
    return hand && hand.legal && !this.model.pendingAct ? hand.legal : null;
  }

  async command(cmd, fields = {}) {
    this.clearError();
    const answer = await this.send(cmd, fields);
    if (answer.type === "error") this.showError(answer.message);
    return answer;
  }

  async act(kind, amount) {
    const legal = this.legal();
    if (!legal || !this.connected) return;
    const fields = { action: kind, turn: this.model.hand.turn };
    if (kind === "bet_raise") {
      if (amount === null || amount === undefined) return;
      fields.amount = amount;
    }
    this.model.pendingAct = true;
    this.render(this.model, this.connected);
    const answer = await this.command("act", fields);
    if (answer.type === "error") {
      this.model.pendingAct = false;
      this.render(this.model, this.connected);
    }
  }

  /** Answer the question to run it twice (the `run_twice_answered` event confirms it). */
  async answerRunTwice(agree) {
    if (!this.connected || !askedToRunTwice(this.model) || this.model.pendingAnswer) return;
    this.model.pendingAnswer = true;
    this.render(this.model, this.connected);
    const answer = await this.command("run_twice", { agree, turn: this.model.hand.turn });
    if (answer.type === "error") {
      this.model.pendingAnswer = false;
      this.render(this.model, this.connected);
    }
  }

  /** The question to run it twice: Yes/No while the viewer is asked, then who is left. */
  renderRunTwice(model) {
    const q = model.hand && model.hand.runTwice;
    const me = mySeat(model);
    const involved = Boolean(q && q.runs === 0 && me !== null && q.asked.includes(me));
    this.runTwice.hidden = !involved;
    if (!involved) return;
    const asked = askedToRunTwice(model) && !model.pendingAnswer;
    this.runTwiceYes.hidden = !asked;
    this.runTwiceNo.hidden = !asked;
    for (const b of [this.runTwiceYes, this.runTwiceNo]) b.disabled = !this.connected;
    if (asked) this.runTwiceText.textContent = "Everyone is all-in. Run it twice?";
    else if (q.agreed.includes(me)) this.runTwiceText.textContent = "You agreed to run it twice: waiting for the others.";
    else this.runTwiceText.textContent = "Sending your answer…";
  }

  amountTyped() {
    const cents = parseDollars(this.amount.value);
    const legal = this.legal();
    if (!legal) return;
    if (cents === null) {
      this.showError("Enter an amount in dollars, like 12 or 12.50.");
      this.setRaise(this.raiseTo ?? legal.min_to);
      return;
    }
    if (cents < legal.min_to || cents > legal.max_to) {
      this.showError(`The ${legal.is_bet ? "bet" : "raise"} must be from ${money(legal.min_to)} to ${money(legal.max_to)}; set to the nearest.`);
    } else {
      this.clearError();
    }
    this.setRaise(cents);
  }

  setRaise(cents, { fromSlider = false } = {}) {
    const legal = this.legal();
    if (!legal || legal.min_to === null) return;
    this.raiseTo = clamp(Math.round(cents), legal.min_to, legal.max_to);
    if (!fromSlider) this.slider.value = String(this.raiseTo);
    this.amount.value = inputDollars(this.raiseTo);
    this.raiseLabel(legal);
  }

  raiseLabel(legal) {
    const word = legal.is_bet ? "Bet" : "Raise to";
    const allIn = this.raiseTo === legal.all_in_to ? " (all-in)" : "";
    this.raise.firstChild.textContent = `${word} ${money(this.raiseTo)}${allIn} `;
  }

  async advanceChanged(box) {
    const kind = box.dataset.advance;
    const you = this.model.you;
    for (const other of this.advanceBox.querySelectorAll("[data-advance]")) {
      if (other !== box) other.checked = false;
    }
    const fields = box.checked ? { action: kind } : { action: null };
    if (box.checked && kind === "bet_raise") fields.amount = this.advanceRaiseTo();
    // Shown ticked at once; the server's `"advance": null` (cleared or used) unticks it.
    const previous = you ? you.advance : null;
    if (you) you.advance = box.checked ? { kind, amount: fields.amount ?? null } : null;
    const answer = await this.command("advance", fields);
    if (answer.type === "error" && you) you.advance = previous;
    this.render(this.model, this.connected);
  }

  /** The total a ticked bet/raise goes to (the server's `advance_options.raise_to`). */
  advanceRaiseTo() {
    const options = this.model.hand.advanceOptions;
    return options ? options.raise_to : toMatch(this.model.hand);
  }


  shortcut(e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const target = e.target;
    if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.isContentEditable)) return;
    if (document.querySelector("dialog[open]")) return;
    const key = e.key.toLowerCase();
    const button = { f: this.fold, c: this.call, r: this.raise }[key];
    if (!button || this.now.hidden || button.hidden || button.disabled) return;
    e.preventDefault();
    button.click();
  }

  render(model, connected) {
    this.model = model;
    this.connected = connected;
    const you = model.you;
    const hand = model.hand;
    const me = myPlayer(model);
    const legal = this.legal();
    const myTurn = Boolean(legal && hand.actor === you?.seat);

    this.now.hidden = !myTurn;
    this.root.toggleAttribute("data-my-turn", myTurn);
    if (myTurn) this.renderTurn(legal, hand);
    else this.foldCheck.hidden = true;

    const waiting = Boolean(hand && me && me.status === "in" && hand.actor !== me.seat && !model.pendingAct);
    this.advanceBox.hidden = !waiting;
    // A ticked advance box keeps the focus when it hides as the turn comes; the F/C/R
    // shortcuts ignore keys typed into inputs, so give the focus back to the page.
    if (!waiting && this.advanceBox.contains(document.activeElement)) document.activeElement.blur();
    if (waiting) this.renderAdvance(hand, me, you);

    const turnButtons = [this.fold, this.call, this.raise, this.foldCheckButton];
    for (const b of [...turnButtons, this.sitOut, this.sitIn, this.sitInPost, this.postNow, this.topUp, this.leave]) {
      b.disabled = !connected || (model.pendingAct && turnButtons.includes(b));
    }
    for (const box of this.advanceBox.querySelectorAll("input")) box.disabled = !connected;

    this.sitOut.hidden = !you || you.status === "sitting_out" || you.sitting_out_next;
    this.sitIn.hidden = !you || !(you.status === "sitting_out" || you.sitting_out_next);
    this.sitIn.textContent = you && you.sitting_out_next ? "Keep playing" : "I'm back: wait for the big blind";
    this.sitInPost.hidden = !you || you.status !== "sitting_out";
    this.postNow.hidden = !you || you.status !== "waiting" || this.postsBigBlind(model);
    this.leave.hidden = !you || you.leaving;
    this.topUp.hidden = !you || Boolean(me);
    this.renderBlindToggles();
    this.renderRunTwice(model);
    this.hint.textContent = this.hintText(model);
  }

  /** Whether the viewer, waiting, asked to come in with a big blind (the public seats). */
  postsBigBlind(model) {
    const seat = model.you && model.seats.find((s) => s.seat === model.you.seat);
    return Boolean(seat && seat.posts_big_blind);
  }

  hintText(model) {
    if (!this.config.username) return "You are watching. Log in to take a seat.";
    if (!this.config.canPlay) return "You are watching: this account does not play.";
    const you = model.you;
    if (!you) return model.seats.length >= model.table.seats ? "The table is full: you are watching." : "Choose an empty seat to sit down.";
    if (you.leaving) return "You leave the table when this hand ends.";
    if (you.status === "sitting_out") return "You are sitting out.";
    if (you.sitting_out_next) return "You sit out when this hand ends.";
    if (you.status === "waiting") {
      return this.postsBigBlind(model)
        ? "You come in with a big blind at the next deal."
        : "Waiting for the big blind to reach you.";
    }
    return "";
  }

  renderTurn(legal, hand) {
    const key = `${hand.id}:${hand.turn}`;
    if (this.turnKey !== key) {
      this.turnKey = key;
      this.raiseTo = null;
      this.foldCheck.hidden = true;
    }
    this.fold.hidden = false;
    this.fold.title = legal.can_fold ? "" : "Checking is free: no need to fold.";
    const callText = legal.can_check ? "Check" : `Call ${money(legal.call_amount)}${legal.call_all_in ? " (all-in)" : ""}`;
    this.call.firstChild.textContent = `${callText} `;
    this.raise.hidden = !legal.can_bet_raise;
    const spread = legal.can_bet_raise && legal.min_to !== legal.max_to;
    this.sizing.hidden = !spread;
    for (const button of this.root.querySelectorAll("[data-preset]")) {
      button.hidden = !POT_STRUCTURES.has(hand.structure);
      if (button.dataset.preset === "allin") button.textContent = hand.structure === "PL" ? "Max" : "All-in";
    }
    if (legal.can_bet_raise) {
      this.slider.min = String(legal.min_to);
      this.slider.max = String(legal.max_to);
      this.slider.step = "1";
      this.amount.min = inputDollars(legal.min_to);
      this.amount.max = inputDollars(legal.max_to);
      this.setRaise(this.raiseTo ?? legal.min_to);
    }
  }

  renderAdvance(hand, me, you) {
    const current = toMatch(hand);
    // What a call costs now, as the server counted it for this player.
    const owed = hand.advanceOptions ? hand.advanceOptions.owed : 0;
    const free = owed === 0;
    const show = {
      fold: !free,
      check_fold: free,
      check: free,
      call: !free,
      call_any: true,
      bet_raise: me.stack > owed,
    };
    const ticked = you && you.advance ? you.advance.kind : null;
    for (const box of this.advanceBox.querySelectorAll("[data-advance]")) {
      const kind = box.dataset.advance;
      box.closest("label").hidden = !show[kind] && ticked !== kind;
      box.checked = ticked === kind;
    }
    this.advanceBox.querySelector('[data-role="call-label"]').textContent = `Call ${money(owed)}`;
    const raiseTo = you && you.advance && you.advance.kind === "bet_raise" ? you.advance.amount : this.advanceRaiseTo();
    this.advanceBox.querySelector('[data-role="raise-label"]').textContent = `${current === 0 ? "Bet" : "Raise to"} ${money(raiseTo)}`;
  }
}
