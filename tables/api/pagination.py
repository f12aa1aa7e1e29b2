"""Cursor pagination of the hand list: newest first, stable while hands keep finishing."""

from rest_framework.exceptions import NotFound
from rest_framework.pagination import Cursor, CursorPagination
from rest_framework.request import Request


class HandCursorPagination(CursorPagination):
    ordering = "-id"
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200

    def decode_cursor(self, request: Request) -> Cursor | None:
        """DRF's cursor, refused (404) when its position is not a hand id."""
        cursor = super().decode_cursor(request)
        if cursor is not None and cursor.position is not None:
            position = str(cursor.position)
            if not position.isdigit() or len(position) > 18:
                raise NotFound(self.invalid_cursor_message)
        return cursor
