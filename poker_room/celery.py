"""The Celery application: Redis broker, tasks discovered in every Django app."""

import os

from celery import Celery

from poker_room.broker import register as register_broker_transport

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "poker_room.settings.dev")

# Before the app connects: its Redis transport must ride through a Redis restart.
register_broker_transport()
app = Celery("poker_room")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
