"""The error body of every API endpoint, for the OpenAPI schema."""

from rest_framework import serializers


class ErrorSerializer(serializers.Serializer):
    """``{"detail": <for people>, "code": <stable>}`` (poker_room/api_errors.py)."""

    detail = serializers.CharField()
    code = serializers.CharField()
