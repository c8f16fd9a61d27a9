// Stoicheia workbench: the page's only script (served from the package, no CDN).
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  var form = document.getElementById("input");
  if (form) {
    form.addEventListener("submit", function () {
      document.getElementById("busy").hidden = false;
      document.getElementById("run").disabled = true;
    });
  }
  // A click on a gap marks its candidate table.
  document.querySelectorAll("a.gap").forEach(function (link) {
    link.addEventListener("click", function () {
      document.querySelectorAll(".gapinfo.active").forEach(function (el) { el.classList.remove("active"); });
      var target = document.querySelector(link.getAttribute("href"));
      if (target) { target.classList.add("active"); }
    });
  });
});
