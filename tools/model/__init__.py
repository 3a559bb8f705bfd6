"""The cache model's host side: model.py is the commands on the plugin's
@@MODEL lines, model_lines.py parses them and ties them to the figures,
model_profile.py reads the profiles, model_checks.py and model_tracing.py
are the checks and the tracing slowdowns; model_cost.py measures what the
model costs, and model_validate.py holds it against published figures.
Above image/."""
