# cmake -DINPUT=file -DOUTPUT=header -DNAME=symbol -P embed_binary.cmake
# Writes `alignas(8) inline constexpr unsigned char NAME[] = {...};` holding INPUT's bytes
# (8-byte aligned: the driver reads a fatbinary's header in 64-bit words).
file(READ "${INPUT}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x..,){24})" "\\1\n  " bytes "${bytes}")
file(WRITE "${OUTPUT}" "// Generated from ${INPUT} by cmake/embed_binary.cmake; do not edit.\n#pragma once\n"
     "alignas(8) inline constexpr unsigned char ${NAME}[] = {\n  ${bytes}\n};\n")
