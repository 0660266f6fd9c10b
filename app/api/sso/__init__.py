"""Single sign-on endpoints: the login page's options, start and callback (/auth/sso/*), and the
admin's provider configuration (/api/account/sso, in the account blueprint)."""
