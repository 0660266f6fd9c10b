// Swagger UI over this host's /api/openapi.json. "Authorize" takes a login token or an API key
// (sk_...); requests go to this same host, which names the tenant.
window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: "/api/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: "StandaloneLayout",
    validatorUrl: null,
    persistAuthorization: false
  });
};
