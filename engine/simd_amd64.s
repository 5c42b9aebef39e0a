//go:build !purego

#include "textflag.h"
#include "runs_amd64.h"

// TABLE32 defines NAME as 32 bytes: the 16 of LO and HI (little-endian),
// twice, for both 16-byte lanes of a VPSHUFB (or broadcast to four).
#define TABLE32(NAME, LO, HI) \
	DATA NAME<>+0x00(SB)/8, LO \
	DATA NAME<>+0x08(SB)/8, HI \
	DATA NAME<>+0x10(SB)/8, LO \
	DATA NAME<>+0x18(SB)/8, HI \
	GLOBL NAME<>(SB), RODATA|NOPTR, $32

// RETURN returns R from a token kernel.
#define RETURN(R) \
	MOVQ R, ret+24(FP) \
	VZEROUPPER \
	RET

// VPSHUFB tables, indexed by a byte's low nibble and repeated for both
// 16-byte lanes. leetDigit holds the leetspeak digit with that low nibble
// and leetSign '@' (nibble 0) or '$' (nibble 4): a byte is a leetspeak
// character when it equals one of its two entries. An empty entry is 0,
// which no byte with that nibble equals but for nibble 0, whose entries
// are both characters.
TABLE32(leetDigit, $0x3700353433003130, $0)
TABLE32(leetSign, $0x0000002400000040, $0)

// Base64 bytes, [A-Za-z0-9+/_-], as a set of classes of high nibbles: 1
// for 2 (+ - /), 2 for 3 (digits), 4 for 4 and 6 (letters from A and a),
// 8 for 5 (letters to Z, _) and 16 for 7 (letters to z). b64Low holds the
// classes that take each low nibble and b64High the class of each high
// nibble (none from 8 up): a byte is base64 when the two share a bit.
TABLE32(b64Low, $0x1e1e1e1e1e1e1e1a, $0x0d040504051c1e1e)
TABLE32(b64High, $0x1004080402010000, $0)

TABLE32(lowNibbles, $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f)

// LEET_MASK sets AX to the leetspeak characters of Y0 and Y1 (64 bytes),
// with the tables in Y6 to Y8, and adds their '%' bytes (Y10) to Y9; or
// jumps to notASCII if a byte is 0x80 or above.
#define LEET_MASK \
	VPOR      Y0, Y1, Y2 \
	VPMOVMSKB Y2, AX \
	TESTL     AX, AX \
	JNZ       notASCII \
	VPCMPEQB  Y10, Y0, Y2 \
	VPCMPEQB  Y10, Y1, Y3 \
	VPOR      Y2, Y9, Y9 \
	VPOR      Y3, Y9, Y9 \
	VPAND     Y8, Y0, Y2 \
	VPAND     Y8, Y1, Y3 \
	VPSHUFB   Y2, Y6, Y4 \
	VPSHUFB   Y2, Y7, Y2 \
	VPSHUFB   Y3, Y6, Y5 \
	VPSHUFB   Y3, Y7, Y3 \
	VPCMPEQB  Y0, Y4, Y4 \
	VPCMPEQB  Y0, Y2, Y2 \
	VPCMPEQB  Y1, Y5, Y5 \
	VPCMPEQB  Y1, Y3, Y3 \
	VPOR      Y2, Y4, Y2 \
	VPOR      Y3, Y5, Y3 \
	VPMOVMSKB Y2, AX \
	VPMOVMSKB Y3, BX \
	SHLQ      $32, BX \
	ORQ       BX, AX

// func leetAVX2(pos []int32, raw []byte, from int) (n, end int, ascii, pct bool)
TEXT ·leetAVX2(SB), NOSPLIT, $0-74
	VPXOR Y9, Y9, Y9 // the '%' bytes seen
	MOVQ pos_base+0(FP), DI
	MOVQ DI, R9
	MOVQ pos_len+8(FP), R13
	LEAQ -256(DI)(R13*4), R13    // the last place for a block's 64
	MOVQ raw_base+24(FP), R10
	MOVQ raw_len+32(FP), R11
	MOVQ from+48(FP), R12        // the position of SI
	LEAQ (R10)(R12*1), SI
	CMPQ R11, $64
	JB   done
	MOVQ R11, DX
	SUBQ R12, DX
	ANDQ $-64, DX
	ADDQ SI, DX                  // end of the whole blocks
	ADDQ R10, R11                // end of raw

	VMOVDQU leetDigit<>(SB), Y6
	VMOVDQU leetSign<>(SB), Y7
	VMOVDQU lowNibbles<>(SB), Y8
	MOVL    $0x25, AX // '%'
	VMOVD   AX, X10
	VPBROADCASTB X10, Y10

loop:
	CMPQ    SI, DX
	JAE     tail
	VMOVDQU (SI), Y0
	VMOVDQU 32(SI), Y1
	LEET_MASK
	TESTQ   AX, AX
	JZ      next
	CMPQ    DI, R13
	JGT     done

bits:
	BSFQ AX, BX
	ADDQ R12, BX
	MOVL BX, (DI)
	ADDQ $4, DI
	LEAQ -1(AX), BX
	ANDQ BX, AX
	JNZ  bits

next:
	ADDQ $64, SI
	ADDQ $64, R12
	JMP  loop

tail:
	// The bytes after the whole blocks, if any: the end of the last 64
	// bytes, read again.
	MOVQ    R11, CX
	SUBQ    SI, CX
	JZ      done
	VMOVDQU -64(R11), Y0
	VMOVDQU -32(R11), Y1
	LEET_MASK
	NEGQ    CX
	ADDQ    $64, CX
	SHRQ    CX, AX
	TESTQ   AX, AX
	JZ      all
	CMPQ    DI, R13
	JGT     done

tailBits:
	BSFQ AX, BX
	ADDQ R12, BX
	MOVL BX, (DI)
	ADDQ $4, DI
	LEAQ -1(AX), BX
	ANDQ BX, AX
	JNZ  tailBits

all:
	MOVQ R11, SI

done:
	SUBQ R9, DI
	SHRQ $2, DI
	MOVQ DI, n+56(FP)
	SUBQ R10, SI
	MOVQ SI, end+64(FP)
	MOVB $1, ascii+72(FP)
	VPMOVMSKB Y9, AX
	TESTL AX, AX
	SETNE pct+73(FP)
	VZEROUPPER
	RET

notASCII:
	SUBQ R9, DI
	SHRQ $2, DI
	MOVQ DI, n+56(FP)
	SUBQ R10, SI
	MOVQ SI, end+64(FP)
	MOVB $0, ascii+72(FP)
	MOVB $0, pct+73(FP)
	VZEROUPPER
	RET

// NOT_BASE64 sets AX to the bytes of Y0 and Y1 (64 in all) that are not
// base64, with the tables in Y6 to Y9.
#define NOT_BASE64 \
	VPSRLW    $4, Y0, Y2 \
	VPSRLW    $4, Y1, Y3 \
	VPAND     Y8, Y0, Y0 \
	VPAND     Y8, Y1, Y1 \
	VPAND     Y8, Y2, Y2 \
	VPAND     Y8, Y3, Y3 \
	VPSHUFB   Y0, Y6, Y0 \
	VPSHUFB   Y1, Y6, Y1 \
	VPSHUFB   Y2, Y7, Y2 \
	VPSHUFB   Y3, Y7, Y3 \
	VPAND     Y2, Y0, Y0 \
	VPAND     Y3, Y1, Y1 \
	VPCMPEQB  Y9, Y0, Y0 \
	VPCMPEQB  Y9, Y1, Y1 \
	VPMOVMSKB Y0, AX \
	VPMOVMSKB Y1, BX \
	SHLQ      $32, BX \
	ORQ       BX, AX

// func tokenSkipAVX2(s []byte) int
TEXT ·tokenSkipAVX2(SB), NOSPLIT, $0-32
	MOVQ s_base+0(FP), SI
	MOVQ s_len+8(FP), R11
	MOVQ $0, ret+24(FP)
	CMPQ R11, $64
	JB   short

	MOVQ    R11, DX
	ANDQ    $-64, DX             // end of the whole blocks
	XORQ    DI, DI               // block
	XORQ    R8, R8               // base64 bytes that end the blocks before
	VMOVDQU b64Low<>(SB), Y6
	VMOVDQU b64High<>(SB), Y7
	VMOVDQU lowNibbles<>(SB), Y8
	VPXOR   Y9, Y9, Y9

loop:
	CMPQ    DI, DX
	JAE     tail
	VMOVDQU (SI)(DI*1), Y0
	VMOVDQU 32(SI)(DI*1), Y1
	NOT_BASE64

check:
	// A run from the blocks before that the block's first bytes make 16
	// long (the whole block is 64).
	TESTQ AX, AX
	JZ    run
	BSFQ  AX, BX
	ADDQ  R8, BX
	CMPQ  BX, $16
	JAE   run

	// Bit b of BX when bytes b to b+15 of the block are base64.
	MOVQ  AX, BX
	NOTQ  BX
	RUNS16(BX, R9)
	JNZ   inside

	// The base64 bytes that end the block: 63 less the last other's place.
	BSRQ AX, R8
	XORQ $63, R8
	ADDQ $64, DI
	JMP  loop

tail:
	// The bytes after the whole blocks, if any, as a block whose other
	// bytes are not base64: the end of the last 64 bytes, read again.
	CMPQ    DI, R11
	JAE     none
	VMOVDQU -64(SI)(R11*1), Y0
	VMOVDQU -32(SI)(R11*1), Y1
	NOT_BASE64
	MOVQ    R11, CX
	SUBQ    DI, CX               // bytes after the blocks
	MOVQ    $-1, BX
	SHLQ    CX, BX
	NEGQ    CX
	ADDQ    $64, CX
	SHRQ    CX, AX
	ORQ     BX, AX
	JMP     check

none:
	RETURN(R11)

run:
	// The run of R8 base64 bytes before DI.
	SUBQ R8, DI
	RETURN(DI)

inside:
	BSFQ BX, BX
	ADDQ BX, DI
	MOVQ DI, ret+24(FP)
	VZEROUPPER

short:
	RET

// func tokenSkipAVX512(s []byte) int
//
// tokenSkipAVX2 with AVX-512 BW: a block's 64 bytes are classified in one
// register (VPTESTMB leaves the base64 bytes' mask in K1), and most blocks
// of prose are passed by a test on that mask alone: 16 base64 bytes in a
// row hold a whole aligned group of 8, so a block with no such group can
// only end a run that the bytes before it began, which the run that ended
// the block before tells.
TEXT ·tokenSkipAVX512(SB), NOSPLIT, $0-32
	MOVQ s_base+0(FP), SI
	MOVQ s_len+8(FP), R11
	MOVQ $0, ret+24(FP)
	CMPQ R11, $64
	JB   short512

	MOVQ R11, DX
	ANDQ $-64, DX                // end of the whole blocks
	XORQ DI, DI                  // block
	XORQ R8, R8                  // base64 bytes that end the blocks before
	MOVQ $0x0101010101010101, R12
	MOVQ $0x8080808080808080, R13
	VBROADCASTI32X4 b64Low<>(SB), Z6
	VBROADCASTI32X4 b64High<>(SB), Z7
	VBROADCASTI32X4 lowNibbles<>(SB), Z8

loop512:
	CMPQ      DI, DX
	JAE       tail512
	VMOVDQU64 (SI)(DI*1), Z0

classify512:
	VPSRLW    $4, Z0, Z1
	VPANDQ    Z8, Z0, Z0
	VPANDQ    Z8, Z1, Z1
	VPSHUFB   Z0, Z6, Z0
	VPSHUFB   Z1, Z7, Z1
	VPTESTMB  Z1, Z0, K1
	KMOVQ     K1, AX             // the base64 bytes
	CMPQ      DI, DX
	JB        check512
	// The tail: its bytes were read as the end of the last 64, high.
	MOVQ      R11, CX
	SUBQ      DI, CX             // bytes after the blocks
	NEGQ      CX
	ADDQ      $64, CX
	SHRQ      CX, AX

check512:
	// A run from the blocks before that the block's first bytes make 16
	// long.
	MOVQ   AX, BX
	NOTQ   BX
	TZCNTQ BX, BX
	ADDQ   R8, BX
	CMPQ   BX, $16
	JAE    run512

	// No whole group of 8 base64 bytes: no run starts here.
	MOVQ AX, BX
	NOTQ BX
	SUBQ R12, BX
	ANDQ AX, BX
	ANDQ R13, BX
	JZ   next512

	// Bit b of BX when bytes b to b+15 of the block are base64.
	MOVQ  AX, BX
	RUNS16(BX, R9)
	JNZ   inside512

next512:
	// The base64 bytes that end the block (not all 64: that run is 16).
	NOTQ   AX
	LZCNTQ AX, R8
	ADDQ   $64, DI
	JMP    loop512

tail512:
	// The bytes after the whole blocks, if any, as a block whose other
	// bytes are not base64: the end of the last 64 bytes, read again.
	CMPQ      DI, R11
	JAE       none512
	VMOVDQU64 -64(SI)(R11*1), Z0
	JMP       classify512

none512:
	RETURN(R11)

run512:
	// The run of R8 base64 bytes before DI.
	SUBQ R8, DI
	RETURN(DI)

inside512:
	TZCNTQ BX, BX
	ADDQ   BX, DI
	MOVQ   DI, ret+24(FP)
	VZEROUPPER

short512:
	RET
