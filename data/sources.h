// sources.h — where a corpus's text comes from: the source files that `poslab prepare`
// reads, each as UTF-8 text after the corpus's own clean-up. The split (corpus.h) is made
// per source, so val samples every file of a corpus.
//
//   "fortunes"     the English plain-text files that Debian's `fortunes` and `fortunes-min`
//                  install directly in /usr/share/games/fortunes (the packages' own file
//                  lists in /var/lib/dpkg/info name them; not *.dat, not the *.u8 links, no
//                  subfolder such as off/, no file of another package such as fortunes-zh's
//                  Chinese ones), one source per file, in file-name (byte) order.
//   "fortunes-zh"  song100 then tang300 (file-name order, as above) from `fortunes-zh`,
//                  with ANSI colour escapes (ESC [ digits/';' m) removed.
//   Both fortune corpora then get the same cleaning: control characters (Unicode category
//   Cc: U+0000..U+001F, U+007F..U+009F; Debian's files hold backspaces, bells and a few C1
//   codes) other than newline and tab are dropped, then a line that is exactly "%" (the
//   separator between fortunes) becomes an empty line. A fortune file that is not valid
//   UTF-8 is an error naming the file and the byte offset (none is, in Debian 12). A file
//   not ending in a newline gets one, so two files never run together on one line.
//   "kjv"          the King James Bible: the output of `bible -f Gen1:1-Rev22:21` from
//                  Debian's `bible-kjv` (4,404,412 bytes, 31,102 lines, one verse a line:
//                  "Ge1:1 In the beginning God created the heaven and the earth."), taken as
//                  is, one source. Chapters run to thousands of characters: structure far
//                  longer than a training window.
//   anything else  the path of a UTF-8 text file, one source, taken as is except: a leading
//                  BOM is dropped, CRLF becomes LF; invalid UTF-8 is an error naming the byte
//                  offset; an empty file is an error. ("./fortunes", "./kjv" name files.)
//
// Nothing here installs a package: a missing one is an error that names the apt-get command
// (scripts/deps.sh, run by every make target, installs them all).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace poslab {

// One source of a corpus: where it came from (a path, or the command that printed it) and
// its text after the clean-up above.
struct SourceText {
  std::string name;
  std::string text;
};

// The sources of "fortunes", "fortunes-zh", "kjv" or a file path, in order (see above).
std::vector<SourceText> corpus_sources(const std::string& corpus);

// The files that make up "fortunes" or "fortunes-zh", in order, as listed by dpkg in
// dpkg_info (a parameter only so tests can point it elsewhere).
// Throws "... apt-get install fortunes fortunes-min" when a package is missing.
std::vector<std::string> fortune_files(const std::string& corpus,
                                       const std::string& dpkg_info = "/var/lib/dpkg/info");

// The fortune cleaning above, for the bytes of one file; `what` names it in errors.
std::string clean_fortune_text(std::string_view bytes, bool strip_ansi, const std::string& what);

// The text of the kjv corpus: runs the `bible` program that bible-kjv's file list (in
// dpkg_info, as above) names. Throws "... apt-get install bible-kjv" when the package is
// missing, and names the command when it fails or prints anything but Ge1:1 .. Rev22:21.
std::string kjv_text(const std::string& dpkg_info = "/var/lib/dpkg/info");

}  // namespace poslab
