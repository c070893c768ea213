// The step-through page's stylesheet and script (story_page.h). They are files
// of their own, harness/report/story_page.css and story_page.js, easy to read
// and to check; CMake writes them into story_page_assets.cpp in the build tree
// (from story_page_assets.cpp.in) and reconfigures when either changes.
#pragma once

namespace locklab::harness {

const char* story_page_css();
const char* story_page_script();

}  // namespace locklab::harness
