// Draws the Analytics page's charts from the JSON the page embeds (Chart.js, served from /console/static).
(function () {
  "use strict";
  function draw() {
    var node = document.getElementById("analytics-series");
    if (!node || typeof Chart === "undefined") return;
    var s = JSON.parse(node.textContent);
    var pct = function (v) { return v === null ? null : Math.round(v * 1000) / 10; };
    // the tenant's locale and currency, as the page's cards write them
    var money;
    try { money = new Intl.NumberFormat(s.locale, { style: "currency", currency: s.currency }); }
    catch (e) { money = new Intl.NumberFormat(undefined, { style: "currency", currency: s.currency }); }
    var base = { responsive: true, maintainAspectRatio: false, animation: false,
                 plugins: { legend: { position: "bottom" } } };
    function chart(id, config) {
      var canvas = document.getElementById(id);
      if (canvas) new Chart(canvas, Object.assign({ options: base }, config));
    }
    chart("chart-searches", { type: "bar", data: { labels: s.days,
      datasets: [{ label: "searches", data: s.searches, backgroundColor: "#2454d6" }] } });
    chart("chart-rates", { type: "line", data: { labels: s.days, datasets: [
      { label: "no-result rate %", data: s.noResultRate.map(pct), borderColor: "#b42318" },
      { label: "click-through rate %", data: s.clickThroughRate.map(pct), borderColor: "#2454d6" },
      { label: "conversion per search %", data: s.conversionRate.map(pct), borderColor: "#1c7c4a" }] } });
    chart("chart-revenue", { type: "line", data: { labels: s.days,
      datasets: [{ label: "revenue (" + s.currency + ")", data: s.revenue, borderColor: "#a15c00", fill: false }] },
      options: Object.assign({}, base, { scales: { y: { ticks: { callback: function (v) { return money.format(v); } } } },
        plugins: Object.assign({}, base.plugins, { tooltip: { callbacks: {
          label: function (c) { return money.format(c.parsed.y); } } } }) }) });
    chart("chart-positions", { type: "bar", data: { labels: s.positions, datasets: [
      { label: "clicks", data: s.positionClicks, backgroundColor: "#2454d6", yAxisID: "y" },
      { label: "click-through rate %", data: s.positionCtr.map(pct), type: "line", borderColor: "#1c7c4a",
        yAxisID: "y1" }] },
      options: Object.assign({}, base, { scales: { y: { position: "left" },
        y1: { position: "right", grid: { drawOnChartArea: false } } } }) });
    document.body.setAttribute("data-charts", "drawn");
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", draw);
  else draw();
})();
