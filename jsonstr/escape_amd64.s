//go:build !purego

#include "textflag.h"

// ESTOPS sets each byte of OUT to 0xFF where IN's byte is at most 0x1F,
// '"' or '\\', with those bytes broadcast in Y1 to Y3 (T1 and T2 spoiled):
// plain_amd64.s's STOPS.
#define ESTOPS(IN, OUT, T1, T2) \
	VPMINUB  Y1, IN, OUT \
	VPCMPEQB IN, OUT, OUT \
	VPCMPEQB Y2, IN, T1 \
	VPCMPEQB Y3, IN, T2 \
	VPOR     T1, OUT, OUT \
	VPOR     T2, OUT, OUT

// BROADCAST sets Y1 to 0x1F, Y2 to '"' and Y3 to '\\' in every byte.
#define BROADCAST \
	MOVL         $0x1F, DX \
	VMOVD        DX, X1 \
	VPBROADCASTB X1, Y1 \
	MOVL         $0x22, DX \
	VMOVD        DX, X2 \
	VPBROADCASTB X2, Y2 \
	MOVL         $0x5C, DX \
	VMOVD        DX, X3 \
	VPBROADCASTB X3, Y3

// escLo and escHi classify a byte by its low and high nibble (VPSHUFB):
// it is the second byte of a two-byte escape (" \\ / b f n r t) exactly
// when escLo[low] & escHi[high] is not 0. The bits stand for the high
// nibbles 2, 5, 6 and 7; a byte from 0x80 up has no bit in escHi.
DATA escLo<>+0(SB)/8, $0x00040008000d0000
DATA escLo<>+8(SB)/8, $0x0104000200000000
GLOBL escLo<>(SB), RODATA|NOPTR, $16
DATA escHi<>+0(SB)/8, $0x0804020000010000
DATA escHi<>+8(SB)/8, $0x0000000000000000
GLOBL escHi<>(SB), RODATA|NOPTR, $16

// STOPQ sets, in each byte of BS and QC, 0xFF where IN's byte is a
// backslash, or '"' or a control character.
#define STOPQ(IN, BS, QC, T) \
	VPCMPEQB Y3, IN, BS \
	VPCMPEQB Y2, IN, QC \
	VPMINUB  Y1, IN, T \
	VPCMPEQB IN, T, T \
	VPOR     T, QC, QC

// NOTESC sets each byte of NV to 0xFF where IN's byte is not the second
// byte of a two-byte escape (Y15 spoiled).
#define NOTESC(IN, NV) \
	VPAND    Y12, IN, NV \
	VPSHUFB  NV, Y13, NV \
	VPSRLW   $4, IN, Y15 \
	VPAND    Y12, Y15, Y15 \
	VPSHUFB  Y15, Y14, Y15 \
	VPAND    Y15, NV, NV \
	VPCMPEQB Y0, NV, NV

// MASK64 sets R to the 64-bit mask of LO's and HI's byte high bits (DX
// spoiled).
#define MASK64(LO, HI, R) \
	VPMOVMSKB LO, R \
	VPMOVMSKB HI, DX \
	SHLQ      $32, DX \
	ORQ       DX, R

// func scanAVX2(b []byte) (n int, high, esc bool)
//
// 64 bytes a block, with no branch on an escape: a block of plain text
// (no backslash, quote or control) is passed at once, another has masks of
// backslashes (BX), quotes and controls (R11), bytes that cannot follow a
// backslash in a two-byte escape (R12) and high bytes (DI). The escaped
// bytes E, those after an odd run of backslashes, come from simdjson's
// carry trick, R10 carrying into the next block whether its first byte is
// escaped. The block's stops are its quotes and controls not in E, and
// the backslash before each byte of E that R12 has (a \u or invalid
// escape, the caller's: bit 0 of that is a backslash that ended the block
// before). R8 ORs the high bits, R9 the E bits, of the bytes passed. At
// the end a backslash whose escaped byte is past the blocks is the
// caller's too: n is then its offset.
TEXT ·scanAVX2(SB), NOSPLIT, $0-34
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	XORQ AX, AX
	XORQ R8, R8
	XORQ R9, R9
	XORQ R10, R10
	BROADCAST
	MOVL           $0x0F, DX
	VMOVD          DX, X12
	VPBROADCASTB   X12, Y12
	VBROADCASTI128 escLo<>(SB), Y13
	VBROADCASTI128 escHi<>(SB), Y14
	VPXOR          Y0, Y0, Y0

sloop:
	LEAQ    64(AX), DX
	CMPQ    DX, CX
	JA      send
	VMOVDQU (SI)(AX*1), Y4
	VMOVDQU 32(SI)(AX*1), Y5
	STOPQ(Y4, Y6, Y7, Y8)
	STOPQ(Y5, Y9, Y10, Y11)

	// A block of plain text, no carry into it: no masks.
	VPOR      Y6, Y7, Y8
	VPOR      Y9, Y10, Y11
	VPOR      Y8, Y11, Y8
	VPTEST    Y8, Y8
	JNZ       sblock
	TESTQ     R10, R10
	JNZ       sblock
	VPOR      Y4, Y5, Y8
	VPMOVMSKB Y8, DX
	ORQ       DX, R8
	ADDQ      $64, AX
	JMP       sloop

sblock:
	NOTESC(Y4, Y8)
	NOTESC(Y5, Y11)
	MASK64(Y6, Y9, BX)
	MASK64(Y7, Y10, R11)
	MASK64(Y8, Y11, R12)
	MASK64(Y4, Y5, DI)

	// E = ((even ^ (S << 1)) & F, S = (B & odd &^ F) + B, F = B<<1 | carry,
	// with B less a first byte the carry escapes.
	MOVQ R10, DX
	NOTQ DX
	ANDQ DX, BX
	LEAQ (BX)(BX*1), R13
	ORQ  R10, R13
	MOVQ $0xAAAAAAAAAAAAAAAA, DX
	ANDQ BX, DX
	MOVQ R13, R10
	NOTQ R10
	ANDQ R10, DX
	MOVL $0, R10
	ADDQ BX, DX
	ADCQ $0, R10
	SHLQ $1, DX
	MOVQ $0x5555555555555555, BX
	XORQ DX, BX
	ANDQ R13, BX

	// The stops.
	ANDQ BX, R12
	BTQ  $0, R12
	JCS  sprev
	SHRQ $1, R12
	MOVQ BX, DX
	NOTQ DX
	ANDQ DX, R11
	ORQ  R12, R11
	JNZ  sstop
	ORQ  DI, R8
	ORQ  BX, R9
	ADDQ $64, AX
	JMP  sloop

sstop:
	BSFQ  R11, DX
	BZHIQ DX, DI, DI
	ORQ   DI, R8
	BZHIQ DX, BX, BX
	ORQ   BX, R9
	ADDQ  DX, AX
	JMP   sdone

sprev:
	DECQ AX
	JMP  sdone

send:
	SUBQ R10, AX

sdone:
	VZEROUPPER
	MOVQ  AX, n+24(FP)
	TESTQ R8, R8
	SETNE high+32(FP)
	TESTQ R9, R9
	SETNE esc+33(FP)
	RET

// func unquoteAVX2(dst, s []byte) (nd, ns int)
//
// AX is the read offset in s, R11 the write offset in dst (at most AX).
TEXT ·unquoteAVX2(SB), NOSPLIT, $0-64
	MOVQ dst_base+0(FP), DI
	MOVQ s_base+24(FP), SI
	MOVQ s_len+32(FP), CX
	XORQ AX, AX
	XORQ R11, R11
	LEAQ ·escapeByte(SB), R10
	MOVL         $0x5C, DX
	VMOVD        DX, X3
	VPBROADCASTB X3, Y3

uloop:
	LEAQ      32(AX), DX
	CMPQ      DX, CX
	JA        udone
	VMOVDQU   (SI)(AX*1), Y4
	VMOVDQU   Y4, (DI)(R11*1)
	VPCMPEQB  Y3, Y4, Y5
	VPMOVMSKB Y5, DX
	TESTL     DX, DX
	JNZ       uesc
	ADDQ      $32, AX
	ADDQ      $32, R11
	JMP       uloop

uesc:
	BSFL    DX, DX
	ADDQ    DX, AX
	ADDQ    DX, R11
	LEAQ    1(AX), DX
	CMPQ    DX, CX
	JAE     udone
	MOVBLZX (SI)(DX*1), BX
	MOVBLZX (R10)(BX*1), BX
	TESTL   BX, BX
	JZ      udone
	MOVB    BX, (DI)(R11*1)
	ADDQ    $2, AX
	INCQ    R11
	JMP     uloop

udone:
	VZEROUPPER
	MOVQ R11, nd+48(FP)
	MOVQ AX, ns+56(FP)
	RET

// func appendAVX2(dst, s []byte, html bool) (nd, ns int)
//
// AX is the read offset in s, R11 the write offset in dst, R12 the last
// write offset with 40 bytes of room. The bytes to escape are the stops of
// ESTOPS, with html '<', '>' and '&' (Y9 to Y11; without it they hold '"',
// which adds nothing), and those from 0x80 up, whose high bit the window
// ORed into the mask gives.
TEXT ·appendAVX2(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), R12
	SUBQ $40, R12
	MOVQ s_base+24(FP), SI
	MOVQ s_len+32(FP), CX
	XORQ AX, AX
	XORQ R11, R11
	LEAQ ·escapeSeq(SB), R10
	LEAQ ·escapeLen(SB), R13
	BROADCAST
	VMOVDQU Y2, Y9
	VMOVDQU Y2, Y10
	VMOVDQU Y2, Y11
	MOVBLZX html+48(FP), DX
	TESTL   DX, DX
	JZ      aloop
	MOVL         $0x3C, DX // '<'
	VMOVD        DX, X9
	VPBROADCASTB X9, Y9
	MOVL         $0x3E, DX // '>'
	VMOVD        DX, X10
	VPBROADCASTB X10, Y10
	MOVL         $0x26, DX // '&'
	VMOVD        DX, X11
	VPBROADCASTB X11, Y11

aloop:
	LEAQ      32(AX), DX
	CMPQ      DX, CX
	JA        adone
	CMPQ      R11, R12
	JGT       adone
	VMOVDQU   (SI)(AX*1), Y4
	VMOVDQU   Y4, (DI)(R11*1)
	ESTOPS(Y4, Y6, Y7, Y8)
	VPCMPEQB  Y9, Y4, Y7
	VPCMPEQB  Y10, Y4, Y8
	VPOR      Y7, Y6, Y6
	VPOR      Y8, Y6, Y6
	VPCMPEQB  Y11, Y4, Y7
	VPOR      Y7, Y6, Y6
	VPOR      Y4, Y6, Y6
	VPMOVMSKB Y6, DX
	TESTL     DX, DX
	JNZ       astop
	ADDQ      $32, AX
	ADDQ      $32, R11
	JMP       aloop

astop:
	BSFL    DX, DX
	ADDQ    DX, AX
	ADDQ    DX, R11
	MOVBLZX (SI)(AX*1), BX
	CMPL    BX, $0x80
	JAE     adone
	MOVQ    (R10)(BX*8), DX
	MOVQ    DX, (DI)(R11*1)
	MOVBLZX (R13)(BX*1), DX
	ADDQ    DX, R11
	INCQ    AX
	JMP     aloop

adone:
	VZEROUPPER
	MOVQ R11, nd+56(FP)
	MOVQ AX, ns+64(FP)
	RET
