"""`fastapply train`: LoRA fine-tuning of a causal LM to apply lazy edits.

data.py reads the cases; windows.py crops long files around the edit; examples.py turns a case
into prompt + target token ids (the model spec's own prompt); loop.py is the optimisation step;
checkpoint.py saves and resumes atomically; deveval.py scores a dev slice through the real
speculative engine; curve.py writes the learning curve; run.py ties them; cli.py is the command.
"""
