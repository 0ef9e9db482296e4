import logging

log = logging.getLogger(__name__)


def read_rows(path):
    conn = open_db(path)
    rows = conn.fetch_all()
    conn.close()
    return rows
