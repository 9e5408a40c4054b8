// See course-cjk.css: lay the text out again once the Chinese font has loaded.
if (document.fonts) {
  document.fonts.ready.then(function () {
    document.documentElement.classList.add("course-fonts-ready");
  });
}
