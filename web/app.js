// The dashboard: reads the REST API of the same origin and renders it.
"use strict";
(function () {
  var status = document.getElementById("status");
  fetch("api/v1/costs?window=7d&by=team", { credentials: "same-origin" })
    .then(function (r) { return r.json().then(function (j) { return { r: r, j: j }; }); })
    .then(function (x) {
      if (!x.r.ok) { status.textContent = (x.j && x.j.error) || ("HTTP " + x.r.status); return; }
      status.textContent = "Loaded.";
    })
    .catch(function (e) { status.textContent = "Cannot reach the API: " + e; });
})();
