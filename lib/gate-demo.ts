// Throwaway (reverted by the next commit): a type error, a lint error, and not formatted.
export function gateDemo(  ): number {
    const unused = 1
    return 'not a number'
}
