"""Table chat: seated players write, the table reads, staff read it all in the admin.

A line is stored (`ChatMessage`) and sent over the table's stream as a `chat` message.
Only players seated at the table write. A line is at most `CHAT_MAX_CHARS` characters
of printable text (whitespace at the ends dropped, control characters refused); a player
may write `CHAT_BURST` lines in any `CHAT_WINDOW`, counted from the stored lines, so the
limit holds across connections and web processes. When the admin keeps a table's chat
from spectators (`Table.chat_for_spectators` off) only the players seated when a line
is written read it; everyone else learns only that a line was written. A player who
muted another (`ChatMute`, at every table) learns only that the muted player wrote.
"""

import unicodedata
from datetime import timedelta

from django.utils import timezone

from accounts.models import User
from tables.exceptions import NotSeated, TableError
from tables.models import ChatMessage, ChatMute
from tables.selectors import chat_sent
from tables.services.command import TableCommand, table_command

CHAT_MAX_CHARS = 200
CHAT_BURST = 5
CHAT_WINDOW = timedelta(seconds=10)


class ChatRefused(TableError):
    code = "chat_refused"


def chat_text_clean(text: str) -> str:
    """The line as it is stored, or `ChatRefused` with the reason."""
    text = text.strip()
    if not text:
        raise ChatRefused("Write something first.", code="chat_empty")
    if len(text) > CHAT_MAX_CHARS:
        raise ChatRefused(f"A line is at most {CHAT_MAX_CHARS} characters.", code="chat_too_long")
    # Control and format characters (a bidi override, a NUL) could disguise a line.
    if any(unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Cn") for c in text):
        raise ChatRefused("Chat takes printable text only.", code="chat_unprintable")
    return text


@table_command
def chat_send(cmd: TableCommand, *, user: User, text: str) -> ChatMessage:
    """Write a line of chat at the table."""
    seat = cmd.seat_of(user)
    if seat is None:
        raise NotSeated("Only players seated at the table write in its chat.")
    text = chat_text_clean(text)
    since = timezone.now() - CHAT_WINDOW
    recent = ChatMessage.objects.filter(table=cmd.table, author=user, created_at__gte=since)
    if recent.count() >= CHAT_BURST:
        raise ChatRefused(
            f"At most {CHAT_BURST} lines in {CHAT_WINDOW.seconds} seconds: wait a moment.",
            code="chat_rate_limited",
        )
    message = ChatMessage.objects.create(table=cmd.table, author=user, seat=seat.number, text=text)
    readers = None if cmd.table.chat_for_spectators else [s.player_id for s in cmd.seats]
    muted_by = list(ChatMute.objects.filter(muted=user).values_list("muter_id", flat=True))
    cmd.emit(chat_sent(message, readers=readers, muted_by=muted_by))
    cmd.moves_on = False
    return message


@table_command
def chat_mute_set(cmd: TableCommand, *, user: User, player: str, muted: bool) -> None:
    """Stop (or, with `muted` false, start again) reading a player's chat, at every table.

    Nobody else learns of it; from now on the muted player's lines reach the muter as
    "a muted player wrote" only."""
    other = User.objects.filter(username__iexact=player).first()
    if other is None or other == user:
        raise TableError(f"There is no other player {player!r} to mute.", code="no_such_player")
    if muted:
        ChatMute.objects.get_or_create(muter=user, muted=other)
    else:
        ChatMute.objects.filter(muter=user, muted=other).delete()
