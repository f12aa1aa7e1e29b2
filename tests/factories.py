"""factory_boy factories shared by the suite (HackSoft test kit)."""

import factory

from accounts.models import User
from tables.models import Game, StakeLevel, Structure, Table

PASSWORD = "correct-horse-battery"


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"player{n}")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.com")
    password = factory.django.Password(PASSWORD)


class StakeLevelFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = StakeLevel

    name = factory.Sequence(lambda n: f"NL Hold'em 1/2 #{n}")
    game = Game.HOLDEM
    structure = Structure.NO_LIMIT
    small_blind = 100
    big_blind = 200
    small_bet = 200
    big_bet = 400
    buy_in_min = 4_000
    buy_in_max = 20_000


class TableFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Table

    name = factory.Sequence(lambda n: f"Table {n}")
    stake_level = factory.SubFactory(StakeLevelFactory)
