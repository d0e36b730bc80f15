"""Recipes: everything one paper adds to the engine, one package per paper.

Each package registers its parts in its `__init__` (see `gramagents.plugins`): task specs and
their scoring, readers, agents, bank builders, build nodes and report sections. The engine
finds them through the registries and never imports a recipe by name. `docs/adding-a-recipe.md`
walks through a new one.
"""
