"""The cache model's host side: model.py reads the plugin's @@MODEL lines
and profiles, model_cost.py measures what the model costs, and
model_validate.py holds it against published figures. Above image/."""
