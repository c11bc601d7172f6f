// Draws an experiment's primary metric per variant with its 95% interval (Chart.js floating bars).
(function () {
  "use strict";
  function draw() {
    var node = document.getElementById("experiment-chart");
    var canvas = document.getElementById("chart-intervals");
    if (!node || !canvas || typeof Chart === "undefined") return;
    var c = JSON.parse(node.textContent);
    if (!c) return;
    var scale = c.metric === "revenuePerVisitor" ? 1 : 100;
    var round = function (v) { return v === null ? null : Math.round(v * scale * 1000) / 1000; };
    new Chart(canvas, {
      type: "bar",
      data: { labels: c.labels, datasets: [
        { label: "95% interval", data: c.intervals.map(function (iv) {
            return iv[0] === null ? null : [round(iv[0]), round(iv[1])]; }),
          backgroundColor: "rgba(36, 84, 214, 0.35)", barPercentage: 0.12 },
        { label: "estimate", type: "line", showLine: false, data: c.values.map(round),
          borderColor: "#1c7c4a", backgroundColor: "#1c7c4a", pointRadius: 6 }] },
      // the scale fits the intervals (not from zero): a difference of half a point must be visible
      options: { responsive: true, maintainAspectRatio: false, animation: false,
        scales: { y: { beginAtZero: false, grace: "20%" } },
        plugins: { legend: { position: "bottom" } } }
    });
    document.body.setAttribute("data-charts", "drawn");
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", draw);
  else draw();
})();
