"""Table chat: seated players write, the table reads, staff read it all in the admin.

A line is stored (`ChatMessage`) and sent over the table's stream as a `chat` message.
Only players seated at the table write. A line is at most `CHAT_MAX_CHARS` characters
of text that shows as what it says (`chat_text_refusal`): whitespace at the ends is
dropped and the line stored in NFC; control and format characters (a NUL, a bidi
override, a zero-width space), line and paragraph separators (U+2028, U+2029: one
line is one line) and more than `MARKS_MAX` combining marks on one character ("Zalgo"
text, which spills over the lines around it) are refused with the reason. The same
check runs on the command's field before any service does (tables/commands.py), and
again here for whoever calls the service.

A player may write `CHAT_BURST` lines in any `CHAT_WINDOW`, over all tables together:
the lines are counted from the stored ones, so the limit holds across connections and
web processes, and the count and the new line are in one transaction that holds a
lock of the player's own (a transaction-level advisory lock, taken after the table's,
and nothing after it), so two tables' commands cannot both find room for the last line.

When the admin keeps a table's chat from spectators (`Table.chat_for_spectators` off)
only the players seated when a line is written read it; everyone else learns only that a
line was written. A player who muted another (`ChatMute`, at every table) learns only
that the muted player wrote. Muting is the player's own setting, not the table's: it
takes no table's lock, and a mute given again changes nothing.
"""

import unicodedata
from datetime import timedelta

from django.db import connection
from django.utils import timezone

from accounts.models import User
from accounts.names import screen_name_possible
from tables.exceptions import NotSeated, TableError
from tables.models import ChatMessage, ChatMute
from tables.selectors import chat_sent
from tables.services.command import TableCommand, table_command

# The longest line: the one number the command's field, docs/protocol.md, the page's
# input and the column all say (tests/tables/test_chat_text.py checks them against it).
CHAT_MAX_CHARS = 200
CHAT_BURST = 5
CHAT_WINDOW = timedelta(seconds=10)
# Combining marks one character may carry, decomposed: Vietnamese letters carry two (ệ:
# e, a dot below, a circumflex), Indic and Thai syllables two or three; "Zalgo" dozens.
MARKS_MAX = 3
# Unicode categories a line may not hold: controls, format characters (bidi overrides,
# zero-width characters), surrogates, private use, unassigned; line and paragraph
# separators.
UNPRINTABLE = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
# Namespace of the per-player chat locks (pg_advisory_xact_lock(namespace, player)).
_CHAT_LOCK_NAMESPACE = 0x4348_4154  # "CHAT"


class ChatRefused(TableError):
    code = "chat_refused"


def chat_text_refusal(text: str) -> ChatRefused | None:
    """Why `text` cannot be a line of chat (None: it can, once cleaned)."""
    try:
        chat_text_clean(text)
    except ChatRefused as refusal:
        return refusal
    return None


def chat_text_clean(text: str) -> str:
    """The line as it is stored, or `ChatRefused` with the reason."""
    text = text.strip()
    if any(unicodedata.category(c) in UNPRINTABLE for c in text):
        raise ChatRefused(
            "Chat takes printable text on one line only (no control, format or "
            "line-separator characters).",
            code="chat_unprintable",
        )
    text = unicodedata.normalize("NFC", text)
    if not text:
        raise ChatRefused("Write something first.", code="chat_empty")
    if len(text) > CHAT_MAX_CHARS:
        raise ChatRefused(f"A line is at most {CHAT_MAX_CHARS} characters.", code="chat_too_long")
    if _marks_piled(text):
        raise ChatRefused(
            f"At most {MARKS_MAX} accents or other marks on one letter, and never the same "
            "one twice in a row.",
            code="chat_marks",
        )
    return text


def _marks_piled(text: str) -> bool:
    """Whether a character carries more than `MARKS_MAX` combining marks (nonspacing
    or enclosing; spacing marks take room of their own), or one mark twice in a row,
    counted decomposed (an `é` is an `e` and one mark, as written or composed)."""
    run, last = 0, ""
    for c in unicodedata.normalize("NFD", text):
        if unicodedata.category(c) in ("Mn", "Me"):
            run += 1
            if run > MARKS_MAX or c == last:
                return True
        else:
            run = 0
        last = c
    return False


def chat_lock_key(user_id: int) -> tuple[int, int]:
    """The two keys of a player's chat lock (PostgreSQL's advisory lock of two ints)."""
    return _CHAT_LOCK_NAMESPACE, (user_id + 2**31) % 2**32 - 2**31


def _chat_lock(user: User) -> None:
    """Hold the player's chat lock until the transaction ends (their lines at every
    table are counted and written one command at a time); waited for no longer than
    the table's lock (`lock_timeout`, set by the command: then `table_busy`)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", list(chat_lock_key(user.pk)))


@table_command
def chat_send(cmd: TableCommand, *, user: User, text: str) -> ChatMessage:
    """Write a line of chat at the table (at most `CHAT_BURST` in `CHAT_WINDOW` over every
    table: see above)."""
    seat = cmd.seat_of(user)
    if seat is None:
        raise NotSeated("Only players seated at the table write in its chat.")
    text = chat_text_clean(text)
    _chat_lock(user)
    since = timezone.now() - CHAT_WINDOW
    recent = ChatMessage.objects.filter(author=user, created_at__gte=since)
    if recent.count() >= CHAT_BURST:
        raise ChatRefused(
            f"At most {CHAT_BURST} lines in {CHAT_WINDOW.seconds} seconds, over all your "
            "tables: wait a moment.",
            code="chat_rate_limited",
        )
    message = ChatMessage.objects.create(table=cmd.table, author=user, seat=seat.number, text=text)
    readers = None if cmd.table.chat_for_spectators else [s.player_id for s in cmd.seats]
    muted_by = list(ChatMute.objects.filter(muted=user).values_list("muter_id", flat=True))
    cmd.emit(chat_sent(message, readers=readers, muted_by=muted_by))
    cmd.moves_on = False
    return message


def chat_mute_set(*, table_id: int, user: User, player: str, muted: bool) -> None:
    """Stop (or, with `muted` false, start again) reading a player's chat, at every table.

    Nobody else learns of it; from now on the muted player's lines reach the muter as
    "a muted player wrote" only. `table_id` is where it was asked: a mute is no table's
    business, so no table is locked for it, and one given again writes nothing."""
    other = None
    if screen_name_possible(player):  # anything else names nobody (and is never queried)
        other = User.objects.filter(username__iexact=player).first()
    if other is None or other == user:
        raise TableError("There is no other player by that name to mute.", code="no_such_player")
    if muted:
        ChatMute.objects.get_or_create(muter=user, muted=other)
    else:
        ChatMute.objects.filter(muter=user, muted=other).delete()
