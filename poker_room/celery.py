"""The Celery application: Redis broker, tasks discovered in every Django app."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "poker_room.settings.dev")

app = Celery("poker_room")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
