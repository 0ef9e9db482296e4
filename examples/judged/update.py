def read_rows(path):
    try:
        # ... existing code ...
    except DatabaseError as exc:
        log.warning("read failed: %s", exc)
        return []
