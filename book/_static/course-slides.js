// The slides (book/templates/course-reveal): formulas that fit their slide, and Chinese text in every font.
(function () {
  // A formula wider than its slide (a matrix cannot be broken into lines) is drawn smaller until it fits.
  function fitMath(slide) {
    if (!slide) return;
    var right = slide.getBoundingClientRect().right;
    slide.querySelectorAll(".MathJax_Display, .MathJax:not(.MathJax_Display .MathJax)").forEach(function (el) {
      var math = el.classList.contains("MathJax_Display") ? el.firstElementChild || el : el;
      var box = el.parentElement;
      var rect = math.getBoundingClientRect();
      var room = right - rect.left;
      if (box && rect.width > room + 1 && room > 0) {
        var size = parseFloat(getComputedStyle(box).fontSize);
        box.style.fontSize = Math.floor((size * (room - 4)) / rect.width * 10) / 10 + "px";
      }
    });
  }
  function fitAll() {
    document.querySelectorAll(".reveal .slides section:not(.stack)").forEach(fitMath);
  }
  function afterMath(task) {
    if (window.MathJax && MathJax.Hub) MathJax.Hub.Queue(task);
    else task();
  }
  // The speaker notes as MathML: the speaker view (the notes plugin's window, key S) shows a copy of the notes'
  // HTML without MathJax's styles, where MathJax's own markup reads "σ2q" for σ_q². Chromium and Firefox draw MathML
  // themselves, in the speaker view and in the handouts (tools/handouts.py) alike.
  // A font with an OpenType MATH table, named on each formula (the speaker view and the handouts copy the notes
  // without this page's styles): without one, Chromium drew d_k's k level with the d and x² far above the x.
  var MATH_FONTS = '"STIX Two Math", "Cambria Math", "Latin Modern Math", "DejaVu Math TeX Gyre", math';
  function notesToMathML() {
    document.querySelectorAll(".reveal aside.notes").forEach(function (aside) {
      MathJax.Hub.getAllJax(aside).forEach(function (jax) {
        var script = jax.SourceElement();
        var frame = document.getElementById(script.id + "-Frame");
        var shown = frame && frame.parentNode.classList.contains("MathJax_Display") ? frame.parentNode : frame;
        var math = document.createElement("span");
        math.className = "course-mathml";
        math.innerHTML = jax.root.toMathML("");
        if (math.firstElementChild) math.firstElementChild.style.fontFamily = MATH_FONTS;
        if (shown) {
          var preview = shown.previousSibling;
          if (preview && preview.classList && preview.classList.contains("MathJax_Preview")) preview.remove();
          shown.replaceWith(math);
        } else {
          script.before(math);
        }
        script.remove();
      });
    });
    document.documentElement.classList.add("course-notes-ready");
  }
  if (window.MathJax && MathJax.Hub) {
    MathJax.Hub.Register.StartupHook("End", function () {  // after the first typesetting of the page
      MathJax.Hub.Queue(["Require", MathJax.Ajax, "[MathJax]/extensions/toMathML.js"], notesToMathML);
    });
  }
  window.courseFitMath = fitMath;
  window.courseFitAll = fitAll;
  // The running head: on a slide without a heading, the heading of the nearest slide before it that has one (its
  // section, or the deck's title), shown at the foot of the slide.
  function headingOf(slide) {
    return Array.prototype.filter.call(slide.querySelectorAll("h1, h2, h3"), function (h) {
      return !h.closest("aside");  // not a heading of the speaker notes
    })[0] || null;
  }
  // A heading as its Markdown wrote it: its text, each formula as its TeX in \( \), without the ¶ link. The text of
  // a typeset heading holds each formula three times (the drawing, the MathML for screen readers and the TeX: deck
  // 08's foot read "O(n)O(n)O(n)", a lecturer's trial), and a copy of the drawing keeps the sizes MathJax gave it on
  // a hidden slide: the foot typesets the formulas again, where they are drawn.
  function headingSource(heading) {
    var copy = heading.cloneNode(true);
    copy.querySelectorAll('script[type^="math/tex"]').forEach(function (script) {
      script.replaceWith("\\(" + script.textContent + "\\)");
    });
    copy.querySelectorAll(".MathJax_Preview, .MathJax, .MathJax_Display, .MJX_Assistive_MathML").forEach(function (el) {
      el.remove();
    });
    return copy.textContent.replace("\u00b6", "").trim();
  }
  function runningHead(slide) {
    var head = document.querySelector(".course-running-head");
    if (!head || !slide) return;
    var slides = Reveal.getSlides(), heading = null;
    if (!headingOf(slide)) {
      for (var i = slides.indexOf(slide) - 1; !heading && i >= 0; i--) heading = headingOf(slides[i]);
    }
    var text = heading ? headingSource(heading) : "";
    if (head.getAttribute("data-source") === text) return;  // the same section: nothing to draw again
    head.setAttribute("data-source", text);
    head.textContent = text;
    if (!window.MathJax || !MathJax.Hub || !/\\\(|\$/.test(text)) return;
    head.style.visibility = "hidden";  // until its formulas are drawn
    MathJax.Hub.Queue(["Typeset", MathJax.Hub, head], function () {
      if (head.getAttribute("data-source") === text) head.style.visibility = "";
    });
  }
  window.courseRunningHead = runningHead;
  if (typeof Reveal !== "undefined") {
    Reveal.on("ready", function (event) { runningHead(event.currentSlide); });
    Reveal.on("slidechanged", function (event) { runningHead(event.currentSlide); });
    Reveal.on("ready", function (event) { afterMath(function () { fitMath(event.currentSlide); }); });
    Reveal.on("slidechanged", function (event) {
      // MathJax lays out formulas on hidden slides with the wrong sizes: lay out the current slide again.
      if (window.MathJax && MathJax.Hub) MathJax.Hub.Queue(["Rerender", MathJax.Hub, event.currentSlide]);
      afterMath(function () { fitMath(event.currentSlide); });
    });
    Reveal.on("pdf-ready", function () { afterMath(fitAll); });
  }
  // Once the Chinese subset has loaded, lay the text out again (text drawn before it arrived kept empty boxes).
  if (document.fonts) {
    document.fonts.load('18px "Noto Sans SC Course Subset"', "猫").then(function () {
      document.documentElement.classList.add("course-fonts-ready");
    });
  }
})();
