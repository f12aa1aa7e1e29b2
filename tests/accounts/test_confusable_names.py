"""Finding 11 (issue #12) and finding 12 (issue #46): look-alike screen names.

`alice` spelt with a Cyrillic a (U+0430) was accepted beside `alice`. A screen name is now refused
when it is confusable with an existing one after NFKC (Unicode's UTS #39 skeleton,
case-folded: accounts.names), at sign-up, in the `user_sign_up` service, and when an
admin adds or renames a user; a unique `User.name_skeleton` makes the database refuse
it too, so two sign-ups racing each other cannot both pass.

Then `aIice` (a capital I for the l) and `alicė` (a mark on the e, composed by NFKC) were
still accepted beside `alice`. A second skeleton, kept with case (`name_skeleton_cased`,
unique too), sees the capital I as the l it looks like; both skeletons drop diacritics.
Names that differ in their letters (`bill`, `bili`) stay apart in both.
"""

import importlib
import threading

import pytest
from django import forms
from django.apps import apps
from django.db import IntegrityError, connection, transaction

from accounts.models import User
from accounts.names import (
    SCREEN_NAME_MAX,
    name_skeleton,
    name_skeleton_cased,
    screen_name_possible,
)
from accounts.services import ScreenNameUnavailable, user_sign_up
from tests.accounts.test_signup_and_login import sign_up
from tests.kit import UserFactory

pytestmark = pytest.mark.django_db

CYRILLIC_ALICE = "\u0430lice"  # U+0430 CYRILLIC SMALL LETTER A + "lice"
LOOK_ALIKES = [
    CYRILLIC_ALICE,
    "\u0410LICE",  # Cyrillic capital A + "LICE"
    "\u03b1lice",  # Greek small alpha
    "a1ice",  # digit one for l
    "\uff41lice",  # full-width a: NFKC makes it "alice"
    "ALICE",  # case alone
]


# -- the skeleton -------------------------------------------------------------------


@pytest.mark.parametrize("name", LOOK_ALIKES)
def test_look_alikes_share_the_skeleton_of_alice(name):
    assert name_skeleton(name) == name_skeleton("alice")


@pytest.mark.parametrize(
    ("one", "other"),
    [("b0b", "bob"), ("tom", "torn"), ("\u0440aul", "paul"), ("\u0435ve", "eve")],
)
def test_more_look_alikes(one, other):
    assert name_skeleton(one) == name_skeleton(other)


@pytest.mark.parametrize(
    ("one", "other"),
    [("alice", "alicia"), ("bob", "rob"), ("rene", "renee"), ("player1", "player10")],
)
def test_different_names_keep_different_skeletons(one, other):
    assert name_skeleton(one) != name_skeleton(other)


# -- issue #46, finding 12: a capital I for an l, a mark on a letter -------------------

CAPITAL_I = [("alice", "aIice"), ("Alice", "AIice"), ("larry", "Iarry"), ("bill", "bilI")]
MARKED = [
    ("alice", "alic\u0117"),  # e with dot above: "alice" + U+0307, composed by NFKC
    ("alice", "alic\u1eb9"),  # e with dot below (U+0323)
    ("alice", "alice\u0338"),  # a mark that composes with nothing (sign-up refuses it)
    ("alice", "a\u0142ice"),  # l with stroke: the table decomposes it to l + a stroke
    ("renee", "ren\u00e9e"),  # an accent alone
    ("bob", "b\u00f6b"),
]
APART = [
    ("bill", "bili"),
    ("BILL", "BILI"),
    ("Bill", "Bili"),
    ("alice", "alicia"),
    ("player1", "player10"),
    ("raj", "\u0930\u093e\u091c"),  # Devanagari raj: its vowel sign is no diacritic
    ("\u0930\u093e\u092e", "\u0930\u092e"),  # ram and rm: vowel signs stay
]


def confusable(one: str, other: str) -> bool:
    return name_skeleton(one) == name_skeleton(other) or (
        name_skeleton_cased(one) == name_skeleton_cased(other)
    )


@pytest.mark.parametrize(("one", "other"), CAPITAL_I)
def test_a_capital_i_for_an_l_meets_the_l_in_the_cased_skeleton(one, other):
    assert name_skeleton_cased(one) == name_skeleton_cased(other)
    # Folding case first cannot see it: that is why the second skeleton is there.
    assert name_skeleton(one) != name_skeleton(other)


@pytest.mark.parametrize(("one", "other"), MARKED)
def test_a_diacritic_is_dropped_from_both_skeletons(one, other):
    assert name_skeleton(one) == name_skeleton(other)
    assert name_skeleton_cased(one) == name_skeleton_cased(other)


@pytest.mark.parametrize(("one", "other"), APART)
def test_names_that_differ_in_their_letters_stay_apart_in_both_skeletons(one, other):
    assert not confusable(one, other)


@pytest.mark.parametrize(("taken", "name"), CAPITAL_I[:1] + MARKED[:2] + MARKED[4:])
def test_sign_up_refuses_a_capital_i_or_a_marked_look_alike(client, taken, name):
    UserFactory(username=taken)
    response = sign_up(client, name)
    assert response.status_code == 200
    assert "looks too much like one that is taken" in response.content.decode()
    assert list(User.objects.values_list("username", flat=True)) == [taken]


def test_sign_up_refuses_a_mark_that_composes_with_nothing(client):
    response = sign_up(client, "alice\u0338")
    assert response.status_code == 200
    assert "Enter a valid username" in response.content.decode()
    assert not User.objects.exists()


@pytest.mark.parametrize(("taken", "name"), APART[:3])
def test_sign_up_takes_a_name_that_differs_in_its_letters(client, taken, name):
    UserFactory(username=taken)
    assert sign_up(client, name).status_code == 302
    assert User.objects.count() == 2


@pytest.mark.parametrize(("taken", "name"), [CAPITAL_I[0], MARKED[0], MARKED[2]])
def test_the_database_refuses_them_when_every_check_is_skipped(taken, name):
    UserFactory(username=taken)
    with pytest.raises(IntegrityError), transaction.atomic():
        User.objects.create_user(username=name, password="x")
    assert User.objects.count() == 1


def test_the_service_refuses_a_capital_i_look_alike():
    UserFactory(username="alice")
    with pytest.raises(ScreenNameUnavailable):
        user_sign_up(username="aIice", password="a-long-enough-secret")


def test_a_rename_keeps_both_skeletons_in_step():
    user = UserFactory(username="Ilse")
    user.username = "Ines"
    user.save(update_fields=["username"])
    user.refresh_from_db()
    assert (user.name_skeleton, user.name_skeleton_cased) == ("ines", "lnes")


def test_screen_name_possible_is_what_sign_up_takes():
    assert User._meta.get_field("username").max_length == SCREEN_NAME_MAX
    assert screen_name_possible("alice.b+c@d-e_f") and screen_name_possible("\u0430lice")
    for impossible in ("", "a b", "a\x00b", "\ud800", "a\u202eb", "a\u2028b", "alice\u0338"):
        assert not screen_name_possible(impossible), repr(impossible)
    assert not screen_name_possible("x" * (SCREEN_NAME_MAX + 1))


def test_every_user_gets_the_skeleton_of_their_name_and_keeps_it_on_rename():
    user = UserFactory(username="Alice")
    assert user.name_skeleton == "alice"
    user.username = "b0b"
    user.save(update_fields=["username"])
    user.refresh_from_db()
    assert user.name_skeleton == "bob"


# -- sign-up ------------------------------------------------------------------------


@pytest.mark.parametrize("name", LOOK_ALIKES)
def test_sign_up_refuses_a_look_alike_of_a_taken_name(client, name):
    UserFactory(username="alice")
    response = sign_up(client, name)
    assert response.status_code == 200
    body = response.content.decode()
    assert "is taken" in body or "looks too much like one that is taken" in body
    assert User.objects.count() == 1


def test_sign_up_with_a_cyrillic_a_is_refused_with_a_clear_word(client):
    UserFactory(username="alice")
    response = sign_up(client, CYRILLIC_ALICE)
    assert "looks too much like one that is taken" in response.content.decode()
    assert not User.objects.filter(username=CYRILLIC_ALICE).exists()


def test_sign_up_accepts_a_name_nobody_has_one_like(client):
    UserFactory(username="alice")
    response = sign_up(client, "alicia")
    assert response.status_code == 302
    assert User.objects.get(username="alicia").name_skeleton == "alicia"


def test_the_service_refuses_a_look_alike_too():
    UserFactory(username="alice")
    with pytest.raises(ScreenNameUnavailable):
        user_sign_up(username=CYRILLIC_ALICE, password="a-long-enough-secret")
    assert User.objects.count() == 1


def test_the_database_refuses_a_look_alike_that_skipped_every_check():
    UserFactory(username="alice")
    with pytest.raises(IntegrityError), transaction.atomic():
        User.objects.create_user(username=CYRILLIC_ALICE, password="x")


@pytest.mark.django_db(transaction=True)
def test_two_racing_sign_ups_of_look_alikes_cannot_both_pass():
    """The second sign-up checks while the first is not yet committed (so its check sees
    nothing), then waits on the unique skeleton index and is refused once the first
    commits."""
    outcome: dict[str, object] = {}

    def second_sign_up() -> None:
        try:
            user_sign_up(username=CYRILLIC_ALICE, password="a-long-enough-secret")
            outcome["result"] = "created"
        except ScreenNameUnavailable:
            outcome["result"] = "refused"
        finally:
            from django.db import connection as thread_connection

            thread_connection.close()

    with transaction.atomic():
        User.objects.create_user(username="alice", password="a-long-enough-secret")
        thread = threading.Thread(target=second_sign_up)
        thread.start()
        _wait_until_another_backend_waits_on_a_lock()
    thread.join(timeout=30)
    assert outcome["result"] == "refused"
    assert list(User.objects.values_list("username", flat=True)) == ["alice"]


def _wait_until_another_backend_waits_on_a_lock() -> None:
    """Poll pg_stat_activity until the other sign-up is blocked (its insert waits for our
    uncommitted row under the unique index); fail after a generous bound."""
    for _ in range(600):
        with connection.cursor() as cursor:
            # We are inside a transaction: without this, PostgreSQL answers every poll
            # from the statistics snapshot it took at the first one.
            cursor.execute("SELECT pg_stat_clear_snapshot()")
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'"
            )
            if cursor.fetchone()[0]:
                return
        threading.Event().wait(0.05)
    raise AssertionError("the second sign-up never reached the insert")


# -- the admin ----------------------------------------------------------------------


def admin_user_form_data(client, user: User, **changes) -> dict:
    """The admin change form of ``user`` as the page fills it, with ``changes``."""
    form = client.get(f"/admin/accounts/user/{user.pk}/change/").context["adminform"].form
    data: dict[str, object] = {}
    for name, field in form.fields.items():
        if field.disabled:
            continue
        value = changes.get(name, form[name].value())
        if isinstance(field, forms.SplitDateTimeField):
            if value:
                day, time = field.widget.decompress(value)
                data[f"{name}_0"], data[f"{name}_1"] = day.isoformat(), time.isoformat()
        elif isinstance(field, forms.BooleanField):
            if value:
                data[name] = "on"
        elif isinstance(field, forms.ModelMultipleChoiceField):
            data[name] = [getattr(v, "pk", v) for v in value or []]
        elif value is not None:
            data[name] = value
    return data


def admin_rename(client, user: User, new_name: str):
    """Rename ``user`` through the admin's change page (the caller is logged in as staff)."""
    data = admin_user_form_data(client, user, username=new_name)
    return client.post(f"/admin/accounts/user/{user.pk}/change/", data)


@pytest.fixture
def admin_client_(client):
    client.force_login(UserFactory(username="root", is_staff=True, is_superuser=True))
    return client


def test_an_admin_rename_to_a_look_alike_is_refused(admin_client_):
    UserFactory(username="alice")
    bob = UserFactory(username="bob")
    response = admin_rename(admin_client_, bob, CYRILLIC_ALICE)
    assert response.status_code == 200
    assert "looks too much like one that is taken" in response.content.decode()
    bob.refresh_from_db()
    assert (bob.username, bob.name_skeleton) == ("bob", "bob")


def test_an_admin_rename_to_a_fresh_name_moves_the_skeleton(admin_client_):
    bob = UserFactory(username="bob")
    response = admin_rename(admin_client_, bob, "Robert")
    assert response.status_code == 302, response.content.decode()[:2000]
    bob.refresh_from_db()
    assert (bob.username, bob.name_skeleton) == ("Robert", "robert")
    # The old name is free again, a look-alike of the new one is not.
    assert user_sign_up(username="bob", password="a-long-enough-secret").name_skeleton == "bob"
    with pytest.raises(ScreenNameUnavailable):
        user_sign_up(username="R0bert", password="a-long-enough-secret")


def test_an_admin_may_save_a_user_without_renaming_them(admin_client_):
    alice = UserFactory(username="alice")
    response = admin_rename(admin_client_, alice, "alice")
    assert response.status_code == 302


def test_the_admin_cannot_add_a_look_alike(admin_client_):
    UserFactory(username="alice")
    response = admin_client_.post(
        "/admin/accounts/user/add/",
        {
            "username": CYRILLIC_ALICE,
            "usable_password": "true",
            "password1": "a-long-enough-secret",
            "password2": "a-long-enough-secret",
        },
    )
    assert response.status_code == 200
    assert "looks too much like one that is taken" in response.content.decode()
    assert not User.objects.filter(username=CYRILLIC_ALICE).exists()


# -- the migration ------------------------------------------------------------------


def test_the_migration_fills_skeletons_and_keeps_existing_look_alikes_apart():
    """Existing rows get their skeleton; of two existing look-alikes the older keeps the
    plain skeleton and the later one a suffixed one (nobody is renamed)."""
    migration = importlib.import_module("accounts.migrations.0004_user_name_skeleton")
    older = UserFactory(username="alice")
    later = UserFactory(username="zed")
    # Make the later one a look-alike behind save()'s back, as rows from before would be.
    User.objects.filter(pk=later.pk).update(username=CYRILLIC_ALICE, name_skeleton="stale")
    User.objects.filter(pk=older.pk).update(name_skeleton="stale-too")
    migration.fill_skeletons(apps, None)
    older.refresh_from_db()
    later.refresh_from_db()
    assert older.name_skeleton == "alice"
    assert later.name_skeleton == f"alice#{later.pk}"
    assert later.username == CYRILLIC_ALICE
    # Nobody new gets a third one.
    with pytest.raises(ScreenNameUnavailable):
        user_sign_up(username="a1ice", password="a-long-enough-secret")


def test_the_second_migration_fills_both_skeletons_and_keeps_existing_look_alikes_apart():
    """Existing rows get both skeletons anew (the case-folded one without diacritics
    now); of existing look-alikes by the new rules the older keeps the plain skeletons
    and a later one the suffixed one, in the skeleton they share (nobody is renamed)."""
    migration = importlib.import_module("accounts.migrations.0005_user_name_skeleton_cased")
    alice, bill = UserFactory(username="alice"), UserFactory(username="bill")
    capital_i, marked = UserFactory(username="zed"), UserFactory(username="zoe")
    bili = UserFactory(username="bili")
    # Look-alikes behind save()'s back, as rows from before this migration would be.
    User.objects.filter(pk=capital_i.pk).update(username="aIice", name_skeleton_cased="x")
    User.objects.filter(pk=marked.pk).update(username="alic\u0117", name_skeleton="y")
    migration.fill_skeletons(apps, None)
    rows = {u.pk: (u.username, u.name_skeleton, u.name_skeleton_cased) for u in User.objects.all()}
    assert rows[alice.pk] == ("alice", "alice", "alice")
    assert rows[capital_i.pk] == ("aIice", "aiice", f"alice#{capital_i.pk}")
    assert rows[marked.pk] == ("alic\u0117", f"alice#{marked.pk}", f"alice#{marked.pk}")
    assert rows[bill.pk] == ("bill", "bill", "bill")
    assert rows[bili.pk] == ("bili", "bili", "bili")
    with pytest.raises(ScreenNameUnavailable):
        user_sign_up(username="AIice", password="a-long-enough-secret")
