"""The input kit (private): YAML readers and the strict pydantic models with unit types that
scenario and topology files share. Public names live in the packages that use them."""
