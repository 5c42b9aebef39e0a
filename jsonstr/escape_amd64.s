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

// func scanAVX2(b []byte) (n int, high, esc bool)
//
// AX is the read offset, R8 the ORed high bits of the bytes passed, R9 the
// escape flag. A window with a stop byte ORs the high bits below it only
// (BZHI); a backslash whose next byte makes a two-byte escape (escapeByte
// not 0) moves AX past the escape and the loop goes on.
TEXT ·scanAVX2(SB), NOSPLIT, $0-34
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	XORQ AX, AX
	XORQ R8, R8
	XORQ R9, R9
	LEAQ ·escapeByte(SB), R10
	BROADCAST

sloop:
	LEAQ      32(AX), DX
	CMPQ      DX, CX
	JA        sdone
	VMOVDQU   (SI)(AX*1), Y4
	ESTOPS(Y4, Y6, Y7, Y8)
	VPMOVMSKB Y4, BX
	VPMOVMSKB Y6, DX
	TESTL     DX, DX
	JNZ       sstop
	ORQ       BX, R8
	ADDQ      $32, AX
	JMP       sloop

sstop:
	BSFL    DX, DX
	BZHIQ   DX, BX, BX
	ORQ     BX, R8
	ADDQ    DX, AX
	MOVBLZX (SI)(AX*1), BX
	CMPL    BX, $0x5C
	JNE     sdone
	LEAQ    1(AX), DX
	CMPQ    DX, CX
	JAE     sdone
	MOVBLZX (SI)(DX*1), BX
	MOVBLZX (R10)(BX*1), BX
	TESTL   BX, BX
	JZ      sdone
	MOVL    $1, R9
	ADDQ    $2, AX
	JMP     sloop

sdone:
	VZEROUPPER
	MOVQ  AX, n+24(FP)
	TESTQ R8, R8
	SETNE high+32(FP)
	MOVB  R9, esc+33(FP)
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
