import logging

log = logging.getLogger(__name__)


def read_rows(path):
    try:
        conn = open_db(path)
        rows = conn.fetch_all()
        conn.close()
        return rows
    except DatabaseError as exc:
        log.warning("read failed: %s", exc)
        return []
