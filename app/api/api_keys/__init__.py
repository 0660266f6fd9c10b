"""API keys: the reference resource for the pattern every management blueprint follows.

    schemas.py  marshmallow schemas: what comes in, what goes out (and the OpenAPI document)
    routes.py   thin resource: license/permission decorators, parse, call the service, return
    service.py  the rules, on a SQLAlchemy Session the route opens with ``tenant_db()`` (RLS)

Services take the session and the caller's account id explicitly and filter on it as well as
relying on row-level security — two independent walls between tenants.
"""
