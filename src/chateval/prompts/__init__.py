"""Prompts: Jinja templates, the referee role library and the prompt builder."""
