// sources.h — where a corpus's text comes from: the source files that `poslab prepare`
// reads, each as UTF-8 text after the corpus's own clean-up. The split (corpus.h) is made
// per source (val samples every file of a corpus), or, for pystdlib, by whole sources.
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
//   "pystdlib"     source code: the *.py files directly in /usr/lib/python3.11 (no subfolder)
//                  that Debian's libpython3.11-minimal and libpython3.11-stdlib install (their
//                  file lists in /var/lib/dpkg/info, as for the fortunes), one source per file,
//                  in byte order of the names (Debian 12: 171 files, 4,742,373 bytes). Each is
//                  kept whole (clean_source_file): a leading BOM dropped, CRLF made LF, control
//                  characters other than newline and tab dropped, a final newline added if
//                  missing, then one more newline, so an empty line follows every file. The
//                  corpus is split by whole files (corpus.h), so a long val window reads one
//                  module, not the tails of many.
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
  size_t file_bytes = 0;  // its size as read, before the clean-up (for corpus.json)
};

// The sources of "fortunes", "fortunes-zh", "pystdlib", "kjv" or a file path, in order (see
// above).
std::vector<SourceText> corpus_sources(const std::string& corpus);

// Where a corpus came from, for corpus.json: its packages and their installed versions
// ("libpython3.11-minimal 3.11.2-6+deb12u6, libpython3.11-stdlib 3.11.2-6+deb12u6"; a version
// dpkg does not know reads "unknown"), or the path of a file.
std::string corpus_origin(const std::string& corpus);

// The version of an installed package, as dpkg's status file records it (the stanza with
// "Package: <package>" and a Status of "install ok installed" or "hold ok installed"); ""
// when there is none.
std::string package_version(const std::string& package,
                            const std::string& dpkg_status = "/var/lib/dpkg/status");

// The files that make up "fortunes" or "fortunes-zh", in order, as listed by dpkg in
// dpkg_info (a parameter only so tests can point it elsewhere).
// Throws "... apt-get install fortunes fortunes-min" when a package is missing.
std::vector<std::string> fortune_files(const std::string& corpus,
                                       const std::string& dpkg_info = "/var/lib/dpkg/info");

// The files that make up "pystdlib", in order, as listed by dpkg in dpkg_info. Throws
// "... apt-get install libpython3.11-stdlib" (and -minimal when that one is missing too)
// when a package is missing.
std::vector<std::string> pystdlib_files(const std::string& dpkg_info = "/var/lib/dpkg/info");

// The pystdlib cleaning above, for the bytes of one file, the empty line after it included.
// Invalid UTF-8 is an error naming `what` (the file) and the byte offset.
std::string clean_source_file(std::string_view bytes, const std::string& what);

// The fortune cleaning above, for the bytes of one file; `what` names it in errors.
std::string clean_fortune_text(std::string_view bytes, bool strip_ansi, const std::string& what);

// The text of the kjv corpus: runs the `bible` program that bible-kjv's file list (in
// dpkg_info, as above) names. Throws "... apt-get install bible-kjv" when the package is
// missing, and names the command when it fails or prints anything but Ge1:1 .. Rev22:21.
std::string kjv_text(const std::string& dpkg_info = "/var/lib/dpkg/info");

}  // namespace poslab
