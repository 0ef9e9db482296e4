"""Training data from git history: `fastapply data` (cli.py).

gitcases.py walks a repository's commits and yields file edits (original at the parent, expected at
the commit); snippets.py writes lazy update snippets for an edit the way agents write them;
defined.py keeps a snippet only when original + snippet determine the expected file; cases.py
turns the three into eval-schema JSONL rows.
"""
